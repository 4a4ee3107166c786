"""Is any weight of a registered game's position score off? Each weight of the game's agents
module (``WEIGHTS``, named by ``WEIGHT_NAMES``, with the values to try in ``WEIGHT_TRIALS``:
see ``GameType.agents_module``) is set in turn to each of its trial values (the others kept)
and ``--agent`` plays ``--opponent``: 2 players, and 1 against 3 opponents. One process; the
agent reads the module's WEIGHTS when it acts, so the change reaches it.

    PYTHONPATH=. python experiments/agent_weights.py --game ID [--games 2000] [--seed 1]
"""

import argparse
import importlib

import numpy as np

from sorry_env import games
from sorry_env.agents.arena.tournament import run_tournament


def win_rates(module, weights, args):
    module.WEIGHTS = np.array(weights, dtype=np.float64)
    two = run_tournament([args.agent, args.opponent], games=args.games, seed=args.seed, workers=1, game=args.game)
    four = run_tournament(
        [args.agent, *[args.opponent] * 3], games=args.games // 2, seed=args.seed, workers=1, game=args.game
    )
    return two["agents"][0]["win_rate"], four["agents"][0]["win_rate"]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", required=True, help="a registered game whose agents module has WEIGHTS")
    parser.add_argument("--agent", default="heuristic", help="the agent that reads the weights")
    parser.add_argument("--opponent", default="greedy")
    parser.add_argument("--games", type=int, default=2000, help="2-player games per setting (4 players: half)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.games < 2:
        parser.error(f"--games must be at least 2, got {args.games}")
    try:
        kind = games.game_type(args.game)
        module = importlib.import_module(kind.agents_module) if kind.agents_module else None
    except ValueError as error:
        parser.error(str(error))
    if module is None or not all(hasattr(module, name) for name in ("WEIGHTS", "WEIGHT_NAMES", "WEIGHT_TRIALS")):
        parser.error(f"{kind.long_name}'s agents have no WEIGHTS, WEIGHT_NAMES and WEIGHT_TRIALS to vary")
    if 4 not in kind.player_counts:
        parser.error(f"{kind.long_name} is not played by 4 players")
    base = module.WEIGHTS.tolist()
    names = module.WEIGHT_NAMES
    print(
        f"weights {dict(zip(names, base))}: 2 players vs {args.opponent}, 4 players vs 3 x {args.opponent} "
        "(even share 25%)"
    )
    try:
        two, four = win_rates(module, base, args)
        print(f"as shipped            {two:6.1%}  {four:6.1%}")
        for i, name in enumerate(names):
            for value in module.WEIGHT_TRIALS[name]:
                weights = list(base)
                weights[i] = value
                two, four = win_rates(module, weights, args)
                print(f"{name:>8} = {value:<5g}       {two:6.1%}  {four:6.1%}", flush=True)
    except ValueError as error:
        parser.error(str(error))
    finally:
        module.WEIGHTS = np.array(base)


if __name__ == "__main__":
    main()
