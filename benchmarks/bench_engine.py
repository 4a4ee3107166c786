"""Moves per second of the compiled rules core: uniformly random playouts on one core.

Each playout starts a new game and plays random legal moves (legal-move generation, the
move, the turn and the draw, all compiled) until someone wins.

    python benchmarks/bench_engine.py [--games 20000] [--rules hasbro2003] [--players 4]
"""

import argparse
import time

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import DEFAULT_PRESET


@njit  # not cached: it would outlive changes to the engine it inlines
def play_games(rules, active, games, seed):
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    moves = 0
    for g in range(games):
        E.init_state(state, rules, active, (seed + g * 7919) & 0xFFFFFFFF)
        moves += E.random_playout(state, rules, 100000)
    return moves


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=20000)
    p.add_argument("--rules", default=DEFAULT_PRESET)
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    args = p.parse_args()
    if args.games < 1:
        p.error("--games must be >= 1")
    try:
        rules_array = game.rules_array(args.rules)
        seats = game.seats_for(args.players, rules=args.rules)
    except ValueError as e:
        p.error(str(e))
    active = np.zeros(4, dtype=np.int64)
    active[list(seats)] = 1
    play_games(rules_array, active, 10, 1)  # compile
    start = time.perf_counter()
    moves = play_games(rules_array, active, args.games, 0)
    seconds = time.perf_counter() - start
    print(
        f"{args.rules}, {args.players} players: {args.games} games, {moves} moves in {seconds:.2f} s "
        f"= {moves / seconds:,.0f} moves/s ({moves / args.games:.0f} moves/game) on one core"
    )


if __name__ == "__main__":
    main()
