"""Steps per second of a registered game's env (sorry_env.games) under random legal play,
beside the board-game env in the same run (a ratio against a peer, not an absolute target).

Every step builds the observation and the action mask (``env.last()``), as a training loop
would. One step is one decision of the game (one card played in the board game).

    python benchmarks/bench_games.py --game ID [--steps 100000]
"""

import argparse
import functools

from bench_env import steps_per_second

from sorry_env import games
from sorry_env import raw_env as board_raw_env
from sorry_env.game_env import wrap_env


def main():
    ids = [kind.id for kind in games.builtin_game_types()]  # the board game too: a 1.00x check
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--game", required=True, choices=ids, help="the registered game to measure")
    p.add_argument("--steps", type=int, default=100_000)
    args = p.parse_args()
    if args.steps < 1:
        p.error(f"--steps must be at least 1, got {args.steps}")
    game = games.load_game(args.game)

    def raw(players):
        return game.make_env(players)

    def wrapped(players):
        return wrap_env(game.make_env(players))

    first = game.game_type.player_counts[0]
    steps_per_second(lambda: raw(first), 2000)  # compile / warm caches first
    steps_per_second(lambda: board_raw_env(num_players=2), 2000)
    rows = []
    for players in sorted({game.game_type.player_counts[0], game.game_type.player_counts[-1]}):
        own = steps_per_second(functools.partial(raw, players), args.steps)
        board = steps_per_second(functools.partial(board_raw_env, num_players=players), args.steps)
        own_wrapped = steps_per_second(functools.partial(wrapped, players), args.steps)
        rows.append((f"{args.game} raw_env, {players} players", own, f"{own / board:.2f}x the board game"))
        rows.append((f"{args.game} env(), {players} players", own_wrapped, ""))
        rows.append((f"sorry raw_env, {players} players", board, ""))
    for name, rate, note in rows:
        print(f"{name:32s} {rate:12,.0f} steps/s  {note}")


if __name__ == "__main__":
    main()
