"""Steps per second of the Sorry! Express env under random legal play, beside the board-game
env in the same run (a ratio against a peer, not an absolute target).

Every step builds the observation and the action mask (``env.last()``), as a training loop
would. One step is one die resolved (Express) or one card played (the board game).

    python benchmarks/bench_express.py [--steps 100000]
"""

import argparse
import functools

from bench_env import steps_per_second

from sorry_env import raw_env as board_raw_env
from sorry_env.express import env as express_env
from sorry_env.express import raw_env as express_raw_env


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=100_000)
    args = p.parse_args()
    if args.steps < 1:
        p.error(f"--steps must be at least 1, got {args.steps}")
    steps_per_second(lambda: express_raw_env(num_players=2), 2000)  # compile / warm caches first
    steps_per_second(lambda: board_raw_env(num_players=2), 2000)
    rows = []
    for players in (2, 4):
        express = steps_per_second(functools.partial(express_raw_env, num_players=players), args.steps)
        board = steps_per_second(functools.partial(board_raw_env, num_players=players), args.steps)
        wrapped = steps_per_second(functools.partial(express_env, num_players=players), args.steps)
        rows.append((f"express raw_env, {players} players", express, f"{express / board:.2f}x the board game"))
        rows.append((f"express env(), {players} players", wrapped, ""))
        rows.append((f"sorry raw_env, {players} players", board, ""))
    for name, rate, note in rows:
        print(f"{name:32s} {rate:12,.0f} steps/s  {note}")


if __name__ == "__main__":
    main()
