"""Is any single weight of the heuristic's evaluation off? Each weight of
:class:`sorry_env.board.evaluation.Weights` is scaled (x0.5, x0.75, x1.33, x2 by default) and the
changed heuristic plays the default one.

Games are paired: each deal (the seed of the shuffles) is played once with the changed
heuristic in each seat, so the luck of the cards cancels out of the comparison as far as it
can. Both players are compiled; a 2-player comparison of 16,000 games takes about 6 s of one
core.

    python experiments/heuristic_weights.py [--pairs 8000] [--players 2] [--scales 0.5,0.75,1.33,2]
"""

import argparse
import dataclasses
import math

import numpy as np
from numba import njit
from tqdm import tqdm

from sorry_env.agents.montecarlo import MAX_TURNS
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.board.rules import DEFAULT_PRESET, PRESETS
from sorry_env.board.scripted_choices import heuristic_choice

# Only the search agents read these (a score as a chance of winning): the heuristic's
# choices do not depend on them.
SEARCH_ONLY = {"win_slope", "win_horizon"}


@njit  # not cached: it would outlive changes to the engine and agents it inlines
def paired_wins(rules, seats, w_changed, w_default, seed, pairs, max_turns):
    """Games won by the changed heuristic: every deal once with it in each of `seats`."""
    active = np.zeros(4, dtype=np.int64)
    for s in seats:
        active[s] = 1
    buf = E.action_buffer(rules)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    wins = 0
    for g in range(pairs):
        for seat in seats:
            E.init_state(state, rules, active, (seed * 1_000_003 + g) & 0xFFFFFFFF)
            while E.is_running(state, max_turns):
                n = E.legal_actions(state, rules, buf)
                w = w_changed if E.to_move(state) == seat else w_default
                E.step(state, rules, buf[0] if n == 1 else heuristic_choice(state, rules, w, buf, n))
            wins += E.winner(state) == seat
    return wins


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pairs", type=int, default=8000, help="deals per comparison (games: pairs x players)")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--rules", default=DEFAULT_PRESET, choices=sorted(PRESETS))
    p.add_argument("--scales", default="0.5,0.75,1.33,2", help="factors each weight is multiplied by")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    if PRESETS[args.rules].teams != "none":
        p.error("team rules: a changed player's partner would play the default weights; use sorry-eval")
    scales = [float(s) for s in args.scales.split(",")]
    if args.pairs < 1 or not scales:
        p.error("need --pairs >= 1 and at least one scale")
    rules_array = game.rules_array(args.rules)
    seats = np.array(game.seats_for(args.players), dtype=np.int64)
    games = args.pairs * len(seats)
    even = 1 / len(seats)
    names = [f.name for f in dataclasses.fields(DEFAULT_WEIGHTS) if f.name not in SEARCH_ONLY]
    if args.players == 2:
        names.remove("leader")  # with one opponent the leader is the mean: no effect
    print(
        f"changed heuristic vs default, {games} games each ({args.pairs} deals x {len(seats)} seats); "
        f"even: {100 * even:.1f}%, 95% interval about +-{196 * math.sqrt(even * (1 - even) / games):.1f} points"
    )
    rows = []
    for k, (name, scale) in enumerate(tqdm([(n, s) for n in names for s in scales], desc="weights")):
        changed = dataclasses.replace(DEFAULT_WEIGHTS, **{name: getattr(DEFAULT_WEIGHTS, name) * scale})
        wins = paired_wins(
            rules_array, seats, changed.array(), DEFAULT_WEIGHTS.array(), args.seed + k, args.pairs, MAX_TURNS
        )
        rows.append((name, scale, getattr(changed, name), wins / games))
    for name, scale, value, rate in rows:
        print(f"{name:>16} x{scale:<5g} = {value:<8.4g} {100 * rate:5.1f}%  ({100 * (rate - even):+.1f})")


if __name__ == "__main__":
    main()
