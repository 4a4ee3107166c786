"""Can a learned evaluation rank a turn's moves better than the hand-written one? Fitted value
iteration over the next card and the reply, judged by one-move play against the heuristic.

A value network fitted to game outcomes (training/value_fit.py) is well calibrated but, as a
one-move player, loses to the heuristic: an outcome is one noisy bit, and the moves of a
turn differ by a fraction of a point of win chance. Here the outcome is replaced by a target
with no luck left in the next step (the backgammon programs' recipe, with the expectation
over the next card done exactly instead of sampled). Each round:

1. Positions: the current value plays every seat of two-player games (the move whose
   afterstate it values most; a uniformly random move with chance --epsilon), and the
   afterstate of each decision with a choice is kept (public parts only).
2. Targets: one step of expectimax with the current value at the leaves. For every card the
   next player may draw (weighted by the public counts), that player picks its best move by
   the value, and each seat's value of the position the move leads to is averaged over the
   cards. Won and lost positions count 1 and 0.
3. Fit: the network is trained towards the targets (binary cross-entropy with soft labels),
   starting from its current weights, every position once from each seat.
4. Check: the value plays --check-games games as a one-move player against the heuristic
   (compiled, seats alternating), with a 95% Wilson interval.

The value is sigmoid(network(observation)), starting from a value network file (--init
FILE), or with --init evaluation sigmoid(network(observation) + the hand-written
evaluation's logit) with the network's last layer starting at zero: a correction to the
evaluation that starts as the evaluation itself. With --pairs that network also sees, for
every pair of an own and an opposing pawn on the track, how many squares one is behind the
other when it is 12 or fewer (who can bump whom next turn), which the observation's
per-pawn one-hots leave for the network to work out.

    python experiments/value_iteration.py --init evaluation [--pairs] --rounds 3
    python experiments/value_iteration.py --init checkpoints/value-2p.safetensors --rounds 3 --epochs 1 --lr 3e-4

Two players, rules without hands (there the next player's options come from a hidden hand).
"""

import argparse
import time

import numpy as np
import torch
from numba import njit, prange
from torch.nn import functional as F
from tqdm import tqdm

from sorry_env.agents.arena.stats import wilson_interval
from sorry_env.agents.policy import MLP, load_policy
from sorry_env.agents.value_net import net_logit, pack_mlp
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, evaluate, evaluation_logit, win_chance
from sorry_env.board.geometry import TRACK
from sorry_env.board.observation import OBS_SIZE, observe
from sorry_env.board.policy_input import public_state
from sorry_env.board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, N_CARDS, PRESETS, R_PACK_SIZE, R_PAWNS
from sorry_env.board.scripted_choices import heuristic_choice
from sorry_env.board.simulate import action_buffer, after_move_into, card_chances, determinize, is_chance_node

# Compiled functions here are not cached: a cache would outlive changes to the engine and
# agents they inline (sorry_env.numba_cache only watches the packages).
MAX_TURNS = DEFAULT_MAX_TURNS  # card plays before a game is abandoned
PAIR_REACH = 12  # the longest single move: pairs of pawns further apart cannot bump at once
PAIR_FEATURES = 4 * 4 * 2 * PAIR_REACH
NO_BASE = np.zeros(0)  # base weights of a value without the evaluation under it


@njit
def network_input(state, rules, seat, x):
    """x := the network's input for `seat`: the observation, and when x is longer, the pair
    features: for each own pawn i and opposing pawn j on the track (slots in canonical order,
    opponents in turn order), a one-hot of how far j is behind i (1..PAIR_REACH squares: j
    can reach i) or i behind j (i can reach j). Two players, or the first opponent only."""
    observe(state, rules, seat, x[:OBS_SIZE])
    if x.shape[0] == OBS_SIZE:
        return
    x[OBS_SIZE:] = 0.0
    other = E.other_seat(state, seat, 1)
    for i in range(rules[R_PAWNS]):
        mine = E.pawn_code(state, seat, i)
        if mine >= TRACK:
            continue
        for j in range(rules[R_PAWNS]):
            theirs = E.pawn_code(state, other, j)
            if theirs >= TRACK:
                continue
            behind = (mine - theirs) % TRACK  # squares j is behind i
            first = OBS_SIZE + (i * 4 + j) * 2 * PAIR_REACH
            if 1 <= behind <= PAIR_REACH:
                x[first + behind - 1] = 1.0
            elif 1 <= TRACK - behind <= PAIR_REACH:
                x[first + PAIR_REACH + TRACK - behind - 1] = 1.0


@njit
def network_inputs(states, rules, viewers, out):
    """out[k] := network_input of states[k] (int16 rows) for seat viewers[k]."""
    state = np.empty(states.shape[1], dtype=np.int64)
    for k in range(states.shape[0]):
        state[:] = states[k]
        network_input(state, rules, viewers[k], out[k])


@njit
def seat_value(state, rules, params, sizes, base, seat, obs):
    """`seat`'s chance of winning at `state`: the result once decided, else the network's
    (plus the evaluation's logit when `base` holds evaluation weights)."""
    if E.winner(state) >= 0:
        return 1.0 if E.same_side(rules, seat, E.winner(state)) else 0.0
    network_input(state, rules, seat, obs)
    z = net_logit(params, sizes, obs)
    if base.shape[0] > 0:
        z += evaluation_logit(state, rules, base, seat)
    return 1.0 / (1.0 + np.exp(-z))


@njit
def best_child(state, rules, params, sizes, base, legal, n, child, best, obs):
    """best := the position after the move of legal[:n] the player to move values most
    (the first on ties); returns that value. child is scratch space."""
    me = E.to_move(state)
    top = -1.0
    for k in range(n):
        after_move_into(child, state, rules, legal[k])
        v = seat_value(child, rules, params, sizes, base, me, obs)
        if v > top:
            top = v
            best[:] = child
    return top


@njit
def self_play_positions(rules, active, params, sizes, base, epsilon, seed, states):
    """Fill `states` with the public afterstates of the value's decisions with a choice in
    games against itself (a random move with chance `epsilon`); returns the games started."""
    legal = action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    child = np.empty_like(state)
    chosen = np.empty_like(state)
    coin = np.zeros(E.STATE_SIZE, dtype=np.int64)  # a generator for the exploring moves
    E.seed_generator(coin, (seed ^ 0x2545F491) & 0xFFFFFFFF)
    obs = np.empty(sizes[0], dtype=np.float32)
    k = 0
    g = 0
    while k < states.shape[0]:
        E.init_state(state, rules, active, (seed + 7919 * g) & 0xFFFFFFFF)
        while E.is_running(state, MAX_TURNS) and k < states.shape[0]:
            n = E.legal_actions(state, rules, legal)
            if n == 1:
                E.step(state, rules, legal[0])
                continue
            if E.randint(coin, 1 << 20) < epsilon * (1 << 20):
                E.play(state, rules, legal[E.randint(coin, n)])
            else:
                best_child(state, rules, params, sizes, base, legal, n, child, chosen, obs)
                state[:] = chosen
            public_state(state, chosen)
            states[k] = chosen
            k += 1
            if is_chance_node(state, rules):
                E.draw(state, rules)
        g += 1
    return g


@njit
def backup(public, rules, params, sizes, base, seed, out):
    """out[seat] := each seat's expected value after the next card and the next player's
    best move by the value (one step of expectimax), from public afterstate `public`."""
    x = public.astype(np.int64)
    # A public state has no draw pile: rebuild one from the remaining counts.
    x[E.DRAW_POS] = rules[R_PACK_SIZE] - x[E.REMAIN : E.REMAIN + N_CARDS].sum()
    determinize(x, rules, E.to_move(x), seed)
    obs = np.empty(sizes[0], dtype=np.float32)
    out[:] = 0.0
    if not is_chance_node(x, rules):  # decided (or a split seven under way: not searched)
        for seat in range(4):
            if E.is_active(x, seat):
                out[seat] = seat_value(x, rules, params, sizes, base, seat, obs)
        return
    probs = np.empty(N_CARDS)
    card_chances(x, rules, probs)
    decision = np.empty_like(x)
    child = np.empty_like(x)
    best = np.empty_like(x)
    legal = action_buffer(rules)
    for c in range(N_CARDS):
        if probs[c] == 0.0:
            continue
        decision[:] = x
        E.deal(decision, rules, c)  # reshuffles an empty pile first
        mover = E.to_move(decision)
        n = E.legal_actions(decision, rules, legal)
        top = best_child(decision, rules, params, sizes, base, legal, n, child, best, obs)
        for seat in range(4):
            if E.is_active(decision, seat):
                v = top if seat == mover else seat_value(best, rules, params, sizes, base, seat, obs)
                out[seat] += probs[c] * v


@njit(parallel=True)
def backup_targets(states, rules, params, sizes, base, seed, out):
    """out[k] := backup(states[k]) for every row, over all cores."""
    for k in prange(states.shape[0]):
        backup(states[k], rules, params, sizes, base, seed + k, out[k])


@njit
def duel(rules, params, sizes, base, w, games, seed):
    """Wins of the value as a one-move player in `games` two-player games against the
    heuristic, taking seat 0 and seat 2 in turn (a game that reaches MAX_TURNS is not won)."""
    active = np.array([1, 0, 1, 0], dtype=np.int64)
    legal = action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    child = np.empty_like(state)
    best = np.empty_like(state)
    obs = np.empty(sizes[0], dtype=np.float32)
    wins = 0
    for g in range(games):
        value_seat = 2 * (g % 2)
        E.init_state(state, rules, active, (seed + 104729 * g) & 0xFFFFFFFF)
        while E.is_running(state, MAX_TURNS):
            n = E.legal_actions(state, rules, legal)
            if n > 1 and E.to_move(state) == value_seat:
                best_child(state, rules, params, sizes, base, legal, n, child, best, obs)
                state[:] = best
                if is_chance_node(state, rules):
                    E.draw(state, rules)
            else:
                action = legal[0] if n == 1 else heuristic_choice(state, rules, w, legal, n)
                E.step(state, rules, action)
        wins += E.winner(state) == value_seat
    return wins


@njit
def move_gaps(rules, active, w, seed, gaps):
    """gaps[k] := at the k-th decision of heuristic self-play with at least two distinct
    afterstates, how much more the evaluation's best afterstate is worth than its second best,
    in chance of winning for the mover: the margin a learned value must get right."""
    legal = action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    child = np.empty_like(state)
    k = 0
    g = 0
    while k < gaps.shape[0]:
        E.init_state(state, rules, active, (seed + 7919 * g) & 0xFFFFFFFF)
        g += 1
        while E.is_running(state, MAX_TURNS) and k < gaps.shape[0]:
            n = E.legal_actions(state, rules, legal)
            if n > 1:
                me = E.to_move(state)
                first = -1.0
                second = -1.0
                for j in range(n):
                    after_move_into(child, state, rules, legal[j])
                    v = win_chance(child, rules, w, evaluate(child, rules, w, me))
                    if v > first:
                        second = first
                        first = v
                    elif second < v < first:  # an equal value is the same position, or as good as it
                        second = v
                if second >= 0.0:
                    gaps[k] = first - second
                    k += 1
                E.step(state, rules, heuristic_choice(state, rules, w, legal, n))
            else:
                E.step(state, rules, legal[0])


@njit
def base_logits(states, rules, w, viewers, out):
    """out[k] := the evaluation's logit of states[k] (int16 rows) for seat viewers[k]."""
    state = np.empty(states.shape[1], dtype=np.int64)
    for k in range(states.shape[0]):
        state[:] = states[k]
        out[k] = evaluation_logit(state, rules, w, viewers[k])


def fit(mlp, base, states, targets, rules, seats, *, epochs, lr, batch_size, rng, desc) -> float:
    """`epochs` passes of Adam over every (position, seat) row towards its target (the last
    at a third of the learning rate when there are several); returns the last pass's mean
    excess loss (cross-entropy minus the targets' own entropy: 0 is a perfect fit)."""
    optimizer = torch.optim.Adam(mlp.parameters(), lr=lr)
    for epoch in range(epochs):
        if epochs > 1 and epoch == epochs - 1:
            for group in optimizer.param_groups:
                group["lr"] = lr / 3
        rows = rng.permutation(len(states) * len(seats))
        excess = []
        bar = tqdm(range(0, len(rows), batch_size), desc=f"{desc} {epoch + 1}/{epochs}", unit="batch")
        for first in bar:
            batch = rows[first : first + batch_size]
            pos, viewers = batch // len(seats), seats[batch % len(seats)]
            obs = np.empty((len(batch), mlp.layers[0].in_features), dtype=np.float32)
            network_inputs(states[pos], rules, viewers, obs)
            offset = np.zeros(len(batch), dtype=np.float32)
            if len(base):
                base_logits(states[pos], rules, base, viewers, offset)
            p = torch.from_numpy(targets[pos, viewers].astype(np.float32)).clamp(1e-6, 1 - 1e-6)
            loss = F.binary_cross_entropy_with_logits(mlp(torch.from_numpy(obs))[:, 0] + torch.from_numpy(offset), p)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            entropy = -(p * p.log() + (1 - p) * (1 - p).log()).mean().item()
            excess.append(loss.item() - entropy)
            if len(excess) % 100 == 0:
                bar.set_postfix(excess=f"{np.mean(excess[-100:]):.5f}")
    return float(np.mean(excess))


def starting_value(args, p):
    """(mlp, base weights, rules name): a value network file's MLP without a base, or a new
    MLP whose output starts at zero on top of the evaluation."""
    if args.init != "evaluation":
        actor, meta = load_policy(args.init)
        if meta["network"]["kind"] != "afterstate" or meta["network"]["activation"] != "relu":
            p.error(f"{args.init} is not a relu afterstate value network")
        if int(meta["num_players"]) != 2:
            p.error(f"{args.init} is a {meta['num_players']}-player network; this script plays two players")
        return actor.net, NO_BASE, meta["rules"]["name"]
    width = OBS_SIZE + (PAIR_FEATURES if args.pairs else 0)
    mlp = MLP([width, *[int(h) for h in args.hidden.split(",")], 1], "relu")
    with torch.no_grad():
        mlp.layers[-1].weight.zero_()
        mlp.layers[-1].bias.zero_()
    return mlp, DEFAULT_WEIGHTS.array(), args.rules


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--init",
        required=True,
        help="a value network file (.safetensors) to start from, or 'evaluation': a new network that "
        "learns a correction to the hand-written evaluation",
    )
    p.add_argument("--rules", default=DEFAULT_PRESET, choices=sorted(PRESETS), help="rules (--init evaluation)")
    p.add_argument("--hidden", default="256,256", help="hidden layer widths (--init evaluation)")
    p.add_argument(
        "--pairs",
        action="store_true",
        help="give the network the distances between own and opposing pawns too (--init evaluation)",
    )
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--positions", type=int, default=1_000_000, help="self-play positions per round")
    p.add_argument("--epsilon", type=float, default=0.1, help="chance of a random move in the self-play games")
    p.add_argument("--epochs", type=int, default=4, help="passes over each round's positions")
    p.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate (a third of it in the last pass)")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--check-games", type=int, default=10_000, help="games against the heuristic after each round")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    args = p.parse_args(argv)
    if (
        args.rounds < 1
        or args.epochs < 1
        or args.positions < 1000
        or not 0 <= args.epsilon <= 1
        or args.check_games < 1
    ):
        p.error("need --rounds >= 1, --epochs >= 1, --positions >= 1000, 0 <= --epsilon <= 1 and --check-games >= 1")
    if args.pairs and args.init != "evaluation":
        p.error("--pairs needs --init evaluation (a value network file has the observation as its input)")
    if args.init == "evaluation" and PRESETS[args.rules].hand_size:
        p.error("rules with hands are not supported: the next player's options come from a hidden hand")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    mlp, base, rules_name = starting_value(args, p)
    rules_array = game.rules_array(rules_name)
    seats = np.array(game.seats_for(2), dtype=np.int64)
    active = np.zeros(4, dtype=np.int64)
    active[seats] = 1
    rng = np.random.default_rng(args.seed)
    start = time.time()

    def check(label):
        wins = duel(rules_array, *pack_mlp(mlp), base, DEFAULT_WEIGHTS.array(), args.check_games, args.seed + 99991)
        low, high = wilson_interval(wins, args.check_games)
        print(
            f"{label}: as a one-move player, wins {wins / args.check_games:.1%} [{low:.1%}, {high:.1%}] of "
            f"{args.check_games} games against the heuristic",
            flush=True,
        )

    print(f"{rules_name}, 2 players, value: {'evaluation + network' if len(base) else args.init}")
    gaps = np.empty(5000)
    move_gaps(rules_array, active, DEFAULT_WEIGHTS.array(), args.seed, gaps)
    print(
        f"the evaluation's best and second-best moves differ by a median {100 * np.median(gaps):.2f} points of "
        f"win chance ({(gaps < 0.015).mean():.0%} of {len(gaps)} heuristic decisions: under 1.5 points)"
    )
    check("start")
    for r in range(1, args.rounds + 1):
        params, sizes = pack_mlp(mlp)
        t0 = time.time()
        states = np.zeros((args.positions, E.STATE_SIZE), dtype=np.int16)
        n_games = self_play_positions(
            rules_array, active, params, sizes, base, args.epsilon, args.seed + 1_000_003 * r, states
        )
        t1 = time.time()
        targets = np.zeros((args.positions, 4))
        backup_targets(states, rules_array, params, sizes, base, args.seed + 7_000_001 * r, targets)
        print(
            f"round {r}: {args.positions:,} positions from {n_games:,} games in {t1 - t0:.0f} s, "
            f"targets in {time.time() - t1:.0f} s",
            flush=True,
        )
        excess = fit(
            mlp,
            base,
            states,
            targets,
            rules_array,
            seats,
            epochs=args.epochs,
            lr=args.lr,
            batch_size=args.batch_size,
            rng=rng,
            desc=f"round {r} fit",
        )
        print(f"round {r}: fit's excess loss {excess:.5f} nats", flush=True)
        check(f"round {r}")
    print(f"{(time.time() - start) / 60:.1f} min")


if __name__ == "__main__":
    main()
