"""The ``sorry-eval`` command (``python -m sorry_env.agents.arena.cli``): tournaments and leagues
(:mod:`sorry_env.agents.arena`)."""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time
from collections.abc import Callable
from typing import Any

import sorry_env.agents as agents  # mypy: see pyproject [tool.mypy]
from sorry_env import games
from sorry_env.agent import IllegalMove
from sorry_env.board.rules import DEFAULT_PRESET, PRESETS
from sorry_env.version import made_by

from .output import format_table, write_outputs
from .tournament import run_tournament


# ---- command line ---------------------------------------------------------------------------
def parse_args(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    parser = argparse.ArgumentParser(
        prog="sorry-eval",
        description="A tournament between Sorry! agents with rotated seats and first moves.",
        epilog="examples:\n  sorry-eval heuristic random --games 2000\n"
        + "".join(
            f"  sorry-eval --game {kind.id} greedy random random --games 2000\n"
            for kind in games.builtin_game_types()[1:]
        )
        + "  sorry-eval heuristic random random random --games 2000 --out runs/eval/heuristic-4p\n"
        "  sorry-eval --league heuristic greedy random --games 400 --out runs/eval/league",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "agents",
        nargs="+",
        metavar="AGENT",
        help=f"one per player: a registered agent ({', '.join(sorted(agents.AGENTS))}), "
        "a policy file (.safetensors; sorry-export makes one from a training run), an "
        "sb3-contrib MaskablePPO model (.zip) trained on sorry_env/Sorry-v1, or your own "
        "agent as package.module:Name; with --league, the league's agents",
    )
    parser.add_argument(
        "--league",
        action="store_true",
        help="play every pair (every set of --players agents) of the listed agents; writes a "
        "win-share matrix (table, league_matrix.csv, league.png) and ratings",
    )
    parser.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        help="number of players; must match the agents listed (default: their number)",
    )
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0, help="the same seed gives the same results")
    board, *others = games.builtin_game_types()  # the board game first
    parser.add_argument(
        "--game",
        default=board.id,
        choices=tuple(kind.id for kind in (board, *others)),
        help=f"the registered game to play (sorry_env.games): {board.id} (the board game) or "
        + ", ".join(f"{kind.id} ({kind.long_name})" for kind in others)
        + "; the other games' agents take the same specs (random, greedy, the game's own agents with settings, "
        "or a policy file of that game; docs/agents.md)",
    )
    parser.add_argument("--rules", choices=sorted(PRESETS), help="board-game rules (default: hasbro2003)")
    parser.add_argument(
        "--max-turns",
        type=int,
        help="turns before a game is stopped and counted as a draw (default: the game's own limit: "
        + "; ".join(f"{kind.id}: {kind.max_turns} {kind.turn_unit}" for kind in games.builtin_game_types())
        + ")",
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: all cores)")
    parser.add_argument("--out", default="runs/eval", help="directory for results.json, CSVs and win_rates.png")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.add_argument(
        "--record",
        nargs=2,
        metavar=("K", "DIR"),
        help="also save the first K games as replay files DIR/game-0000.json ... (sorry-replay "
        "prints and animates them; they are played again after the tournament)",
    )
    parser.add_argument(
        "--torch-threads",
        type=int,
        help="torch threads per playing process (default: SORRY_TORCH_THREADS, else 1; policies "
        "answer one position at a time, where more threads only fight over the cores)",
    )
    return parser, parser.parse_args(argv)


def check_out_dir(out) -> None:
    """ValueError unless `out` is (or can be created as) a writable directory: checked
    before the games, so a long tournament never ends in an unwritable folder."""
    path = pathlib.Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out {out} is a file; name a directory for the results")
    existing = path
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise ValueError(f"--out {out}: {existing} is a file, so no directory can be made there")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"--out {out}: {existing} is not writable")


def main(argv: list[str] | None = None) -> None:
    parser, args = parse_args(argv)
    _outcome(parser, lambda: check_out_dir(args.out))
    if args.torch_threads is not None and args.torch_threads < 1:
        parser.error(f"--torch-threads must be at least 1, got {args.torch_threads}")
    record = _record_request(parser, args)  # checked before any game is played
    start = time.perf_counter()
    provenance = made_by("sorry-eval", sys.argv[1:] if argv is None else argv)
    if args.league:
        from .league import format_league, write_league

        results = _league(parser, args)
        text, write = format_league(results), write_league
        done = f"league played in {time.perf_counter() - start:.1f} s"
    else:
        results = _tournament(parser, args)
        elapsed = time.perf_counter() - start
        text, write = format_table(results), write_outputs
        done = f"{args.games} games in {elapsed:.1f} s ({args.games / elapsed:.0f} games/s)"
    results["made_by"] = provenance
    print(text)
    print(done)
    try:
        paths = write(results, args.out)
    except OSError as error:
        parser.exit(1, f"sorry-eval: cannot write the results to {args.out}: {error}\n")
    for path in paths:
        print(f"wrote {path}")
    if record is not None and not args.league:  # a league's games are not replayed
        from .record import record_games

        played = games.load_game(args.game, args.rules or None)  # the board game's rules, or another game
        record_k, record_dir = record
        limit = results["config"]["max_turns"]  # the tournament's (the game's own by default)
        for path in record_games(args.agents, record_k, record_dir, args.seed, played, limit, results["games"]):
            print(f"wrote {path}")


def _record_request(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple | None:
    """(K, DIR) of --record, checked; None without it."""
    if not args.record:
        return None
    from .record import check_record_request

    return _outcome(parser, lambda: check_record_request(args.record[0], args.record[1], args.games))


def _league(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """The results of the league the arguments ask for (errors end the command)."""
    from .league import run_league

    if not games.game_type(args.game).batched_step:
        parser.error(f"--league plays the board game (--game {games.default_game_id()}) only")
    return _outcome(
        parser,
        lambda: run_league(
            args.agents,
            args.players or 2,
            args.games,
            args.seed,
            args.rules or DEFAULT_PRESET,
            args.workers,
            args.max_turns,
            not args.no_progress,
            args.torch_threads,
        ),
    )


def _tournament(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """The results of the tournament the arguments ask for (errors end the command)."""

    def play() -> dict:
        kind = games.game_type(args.game)
        if args.rules is not None and len(kind.variants) < 2:
            raise ValueError(f"--rules names board-game rules; {kind.long_name} (--game {kind.id}) has none")
        return run_tournament(
            args.agents,
            args.players,
            args.games,
            args.seed,
            games.load_game(args.game, args.rules),
            args.workers,
            args.max_turns,
            progress=not args.no_progress,
            torch_threads=args.torch_threads,
        )

    return _outcome(parser, play)


def _outcome(parser: argparse.ArgumentParser, play: Callable[[], Any]) -> Any:
    """What `play()` (a tournament, a league, a check of the arguments) returns; its errors
    end the command: a bad argument (ValueError) as a usage error, an illegal move found
    during play or an interrupt as a failed run."""
    try:
        return play()
    except IllegalMove as error:  # found during play: the run failed, its arguments were fine
        parser.exit(1, f"sorry-eval: {error}; no results written\n")
    except ValueError as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        parser.exit(130, "\nsorry-eval: interrupted; no results written\n")


if __name__ == "__main__":
    main()
