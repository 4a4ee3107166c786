"""How much can one-step search gain over the heuristic? An estimate from the heuristic's
own games.

The heuristic plays itself. At a sample of its decisions, every legal move is valued twice,
by two independent sets of Monte Carlo playouts (:func:`sorry_env.agents.montecarlo.monte_carlo_values`:
common random numbers, every seat played by the heuristic, `--plies` moves then the
evaluation, or to the end of the game with ``--plies 0``). The move one set prefers is judged
by the other set, against the heuristic's own move:

    gain = 1/2 [ (b[argmax a] - b[heuristic]) + (a[argmax b] - a[heuristic]) ]

which is an unbiased estimate of what choosing by playouts gains over the heuristic at that
decision, in chance of winning as the playouts measure it (no winner's curse: a value is
never judged by the playouts that chose it). Summed over the decisions a player makes in a
game (the performance-difference identity, to first order: states are sampled from the
heuristic's games, not the searcher's), this estimates how far above 50% a searcher that
plays the heuristic in its playouts can get against the heuristic.

    python experiments/search_headroom.py [--decisions 1000] [--iterations 4000] [--plies 8]
        [--nested M [--nested-playouts 1000]]

A second step of improvement (``--nested M``): would it help to search the next own
decision inside each playout too? Policy pi_1 is the playout searcher itself (its next own
decision in a playout chosen by a flat search of M playouts, the rest by the heuristic).
Two independent sets of ``--nested-playouts`` playouts of pi_1 value every move; the move one
set prefers is judged by the other against the playout searcher's own choice (from the
first, heuristic, set), which by the same identity estimates what a nested searcher gains
over the playout searcher. Costly: about 1.8 s per decision with ``--plies 6 --nested 40
--nested-playouts 1000``.
"""

import argparse
import time

import numpy as np
from numba import njit
from tqdm import tqdm

from sorry_env.agents.montecarlo import (
    MAX_TURNS,
    SEED_RANGE,
    distinct_moves,
    monte_carlo_choice,
    monte_carlo_values,
    playout_decision,
    playout_result,
)
from sorry_env.agents.value_net import NO_NET
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.board.rules import CARD_NAMES, DEFAULT_PRESET, PRESETS
from sorry_env.board.scripted_choices import heuristic_choice
from sorry_env.board.simulate import action_buffer, after_move_into, determinize


# Not cached: numba cannot cache functions of a module loaded by path (the tests do that).
@njit
def nested_playout(world, rules, w, me, plies, inner, buf):
    """Like agents.montecarlo.rollout_value with the heuristic everywhere, except that `me`'s first
    decision with a choice is made by a flat search of `inner` playouts (from what `me` may
    know: the search re-draws the hidden cards)."""
    searched = False
    obs = np.empty(0, dtype=np.float32)  # no value network
    for _ in range(plies):
        n = playout_decision(world, rules, buf)
        if n == 0:
            break
        if n == 1:
            action = buf[0]
        elif not searched and E.to_move(world) == me:
            searched = True
            action = monte_carlo_choice(
                world,
                rules,
                w,
                buf[:n].copy(),
                n,
                E.randint(world, SEED_RANGE),
                inner,
                plies,
                0.0,
                NO_NET[0],
                NO_NET[1],
            )
        else:
            action = heuristic_choice(world, rules, w, buf, n)
        E.play(world, rules, action)
    return playout_result(world, rules, w, me, NO_NET[0], NO_NET[1], obs)


@njit
def nested_values(state, rules, w, legal, n, seed, iterations, plies, inner, values):
    """sorry_env.agents.montecarlo.monte_carlo_values with nested playouts (same worlds for every move)."""
    me = E.to_move(state)
    moves = np.empty(n, dtype=np.int64)
    same_as = np.empty(n, dtype=np.int64)
    k = distinct_moves(state, rules, legal, n, moves, same_as)
    totals = np.zeros(k)
    seeds = np.zeros(E.STATE_SIZE, dtype=np.int64)
    E.seed_generator(seeds, seed & 0xFFFFFFFF)
    root = np.empty_like(state)
    world = np.empty_like(state)
    buf = action_buffer(rules)
    rounds = max(1, iterations // k) if k > 1 else 0
    for _ in range(rounds):
        world_seed = E.randint(seeds, SEED_RANGE)
        for m in range(k):
            root[:] = state
            determinize(root, rules, me, world_seed)
            after_move_into(world, root, rules, moves[m])
            totals[m] += nested_playout(world, rules, w, me, plies, inner, buf)
    for j in range(n):
        values[j] = totals[same_as[j]] / max(rounds, 1)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--decisions", type=int, default=1000, help="decisions to value (default 1000)")
    p.add_argument("--iterations", type=int, default=4000, help="playouts per set, per decision (default 4000)")
    p.add_argument("--plies", type=int, default=8, help="moves per playout before the evaluation; 0: to the end")
    p.add_argument("--sample", type=float, default=0.3, help="share of the decisions valued (default 0.3)")
    p.add_argument("--rules", default=DEFAULT_PRESET, choices=sorted(PRESETS))
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--nested",
        type=int,
        default=0,
        metavar="M",
        help="also measure a second step: playouts whose next own decision is a search of M playouts",
    )
    p.add_argument("--nested-playouts", type=int, default=1000, help="playouts per nested set (default 1000)")
    args = p.parse_args()
    if args.decisions < 1 or args.iterations < 1 or args.plies < 0 or not 0 < args.sample <= 1:
        p.error("need --decisions >= 1, --iterations >= 1, --plies >= 0 and 0 < --sample <= 1")
    if args.nested < 0 or args.nested_playouts < 1 or (args.nested and args.plies == 0):
        p.error("need --nested >= 0, --nested-playouts >= 1, and --plies >= 1 with --nested")
    rules_obj = PRESETS[args.rules]
    if rules_obj.hand_size:
        p.error("play-for-points rules hide the hands: the estimate needs one known position")
    rules_array = game.rules_array(rules_obj)
    w = DEFAULT_WEIGHTS.array()
    rng = np.random.default_rng(args.seed)
    buf = E.action_buffer(rules_array)
    gains, cards, second = [], [], []
    choices = 0  # decisions with more than one legal move, in finished games
    finished = 0
    start = time.perf_counter()
    bar = tqdm(total=args.decisions, desc="decisions valued")
    g = 0
    while len(gains) < args.decisions:
        state = game.new_state(rules_obj, num_players=args.players, seed=args.seed * 1_000_003 + g)
        g += 1
        game_choices = 0
        while E.is_running(state, MAX_TURNS) and len(gains) < args.decisions:
            n = E.legal_actions(state, rules_array, buf)
            legal = buf[:n].copy()
            if n == 1:
                E.step(state, rules_array, legal[0])
                continue
            game_choices += 1
            h = int(np.flatnonzero(legal == heuristic_choice(state, rules_array, w, legal, n))[0])
            if rng.random() < args.sample:
                a, b = np.empty(n), np.empty(n)
                for values in (a, b):
                    monte_carlo_values(
                        state,
                        rules_array,
                        w,
                        legal,
                        n,
                        int(rng.integers(1 << 31)),
                        args.iterations,
                        args.plies,
                        0.0,
                        *NO_NET,
                        values,
                    )
                gains.append(0.5 * ((b[np.argmax(a)] - b[h]) + (a[np.argmax(b)] - a[h])))
                if args.nested:
                    c, d = np.empty(n), np.empty(n)
                    for values in (c, d):
                        nested_values(
                            state,
                            rules_array,
                            w,
                            legal,
                            n,
                            int(rng.integers(1 << 31)),
                            args.nested_playouts,
                            args.plies,
                            args.nested,
                            values,
                        )
                    flat = int(np.argmax(a))
                    second.append(0.5 * ((d[np.argmax(c)] - d[flat]) + (c[np.argmax(d)] - c[flat])))
                cards.append(int(E.card_index(state)))
                bar.update(1)
            E.step(state, rules_array, legal[h])
        if E.winner(state) >= 0:
            finished += 1
            choices += game_choices
    bar.close()
    gains, cards = np.array(gains), np.array(cards)
    mean, se = gains.mean(), gains.std(ddof=1) / np.sqrt(len(gains))
    per_player = choices / max(finished, 1) / args.players
    print(
        f"{args.rules}, {args.players} players, playouts of {args.plies or 'all'} plies, "
        f"{args.iterations} per set; {len(gains)} decisions in {time.perf_counter() - start:.0f} s"
    )
    print(
        f"gain per decision: {100 * mean:.3f} [{100 * (mean - 1.96 * se):.3f}, {100 * (mean + 1.96 * se):.3f}] "
        f"points of win chance"
    )
    print(f"decisions with a choice per player per game: {per_player:.1f} ({finished} finished games)")
    even = 100 / args.players
    print(
        f"implied rate of a playout searcher against the heuristic: {even + 100 * mean * per_player:.1f}% "
        f"[{even + 100 * (mean - 1.96 * se) * per_player:.1f}, {even + 100 * (mean + 1.96 * se) * per_player:.1f}] "
        f"(even: {even:.1f}%)"
    )
    if second:
        second = np.array(second)
        mean2, se2 = second.mean(), second.std(ddof=1) / np.sqrt(len(second))
        print(
            f"second step (next own decision searched with {args.nested} playouts, {args.nested_playouts} nested "
            f"playouts per set): {100 * mean2:.3f} "
            f"[{100 * (mean2 - 1.96 * se2):.3f}, {100 * (mean2 + 1.96 * se2):.3f}] "
            f"points of win chance per decision over the playout searcher, "
            f"{100 * mean2 * per_player:+.1f} [{100 * (mean2 - 1.96 * se2) * per_player:+.1f}, "
            f"{100 * (mean2 + 1.96 * se2) * per_player:+.1f}] points of win rate"
        )
    print(
        "by card:  "
        + "  ".join(
            f"{CARD_NAMES[c]}: {100 * gains[cards == c].mean():.3f} ({(cards == c).sum()})"
            for c in range(len(CARD_NAMES))
            if (cards == c).any()
        )
    )


if __name__ == "__main__":
    main()
