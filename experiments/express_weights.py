"""Is any weight of the Sorry! Express position score off? Each weight of
``sorry_env.agents.express_search.WEIGHTS`` is set in turn to each of a few values (the others kept)
and the heuristic plays greedy: 2 players, and 1 against 3 greedy players. One process;
the heuristic reads the module's WEIGHTS when it acts, so the change reaches it.

    PYTHONPATH=. python experiments/express_weights.py [--games 2000] [--seed 1]
"""

import argparse

import numpy as np

from sorry_env.agents import express_search
from sorry_env.training.express_evaluate import run_express_tournament

NAMES = ("slide", "supply", "held", "sorry", "pawns")
VALUES = {"slide": (0.0, 0.3, 1.0), "supply": (0.0, 1.5, 3.0), "held": (-2.0, 0.0, 1.0, 4.0), "sorry": (0.0, 1.5, 3.0)}
VALUES["pawns"] = (0.0, 1.0, 4.0)


def win_rates(weights, games, seed):
    express_search.WEIGHTS = np.array(weights, dtype=np.float64)
    two = run_express_tournament(["heuristic", "greedy"], games=games, seed=seed, workers=1)
    four = run_express_tournament(["heuristic", *["greedy"] * 3], games=games // 2, seed=seed, workers=1)
    return two["agents"][0]["win_rate"], four["agents"][0]["win_rate"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="2-player games per setting (4 players: half)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error(f"--games must be at least 2, got {args.games}")
    base = express_search.WEIGHTS.tolist()
    print(f"weights {dict(zip(NAMES, base))}: 2 players vs greedy, 4 players vs 3 x greedy (even share 25%)")
    two, four = win_rates(base, args.games, args.seed)
    print(f"as shipped            {two:6.1%}  {four:6.1%}")
    for i, name in enumerate(NAMES):
        for value in VALUES[name]:
            weights = list(base)
            weights[i] = value
            two, four = win_rates(weights, args.games, args.seed)
            print(f"{name:>8} = {value:<5g}       {two:6.1%}  {four:6.1%}", flush=True)
    express_search.WEIGHTS = np.array(base)


if __name__ == "__main__":
    main()
