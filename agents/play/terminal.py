"""Play any registered game (:mod:`sorry_env.games`; the board game Sorry! unless ``--game ID``)
in the terminal against scripted agents and trained policies.

    sorry-play                                         # you vs the heuristic, 2 players
    sorry-play --players 4 --opponents heuristic random checkpoints/sorry-4p.safetensors
    sorry-play --opponents checkpoints/sorry-2p.safetensors --seed 7
    sorry-play --rules hasbro2013 --players 4 --opponents trained   # the shipped policy for that game
    sorry-play --list                                  # the shipped policies (agents.catalog)
    sorry-play --game ID --players 3 --opponents heuristic random

``--opponents`` lists the other seats in turn order after yours (one entry: every opponent
is that agent); each entry is an agent spec of the game (:func:`sorry_env.agents.make_agent`
with ``game=``: an agent name, a policy file, ``package.module:Name``) and, for a game whose
policies ship (``GameType.shipped_policies``), a shipped policy's catalog name
(``hasbro2013-4p``) or ``trained``: the shipped policy for the game's rules and player count.
``--estimate`` prints, before each of your moves, the win chance a policy file's value
network gives you (the shipped policy of the game unless ``--estimate FILE`` names one). The
position is drawn before each of your moves, your legal moves are listed in words, and you
answer with a move's number (``q`` quits). Opponents' moves are printed as they happen.

What you are shown is the game's :meth:`sorry_env.games.Game.play_view`: for most games its
``render_text`` and ``describe_action``; the board game's (:mod:`sorry_env.board.board_view`) tells
every move with its consequences (bumps and whose pawn went back to Start, slides and who was
swept off them, pawns reaching Home, swaps) in the words of :mod:`sorry_env.board.narrate`, lists
each distinct outcome once, keeps pawn labels (``R1`` .. ``R4``) all game and shows your hand
under play for points. A move of yours that is forced (the only one) plays itself, with one
line saying what happened.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

from sorry_env import games
from sorry_env.agents import make_agent, set_torch_threads
from sorry_env.agents.catalog import TRAINED, catalog_rows
from sorry_env.board.rules import PRESETS

from .prompt import QUICK_AGENTS, Quit, Table, ask_choice, first_offered, seat_opponents

__all__ = ["Quit", "main", "play"]


def play(table: Table, read: Callable[[str], str] = input, estimator=None) -> int | None:
    """One game at `table` (the person against labelled agents). Returns the winner seat (None
    if the game reached the table's turn limit). `estimator` (a policy agent with a value
    network) adds its win-chance estimate for you before each of your moves."""
    game, human_seat = table.game, table.human_seat
    view = table.shown
    while not table.over:
        seat, forced = table.mover(), False
        if seat == human_seat:
            options = view.options(table.state)
            forced = len(options) == 1
            if not forced:
                print("\n" + view.position(table.state))
                if estimator is not None:
                    chance = estimator.win_chance(table.state, game.agent_rules, human_seat)
                    print(f"Win chance ({estimator.name}): {chance:.0%}")
            action = options[0 if forced else ask_choice([words for _, words in options], read)][0]
        else:
            action = table.opponent_action()
        before = table.move(int(action))
        player = None if seat == human_seat else table.player_name(seat)
        print(view.told(before, int(action), table.state, player) + (" (forced: your only move)" if forced else ""))
    print("\n" + view.position(table.state))
    return game.winner(table.state)


def _agent(game: games.Game, spec: str, num_players: int, seed: int | None = None):
    """The agent `spec` names (``trained``: the game's shipped policy, for a game whose policies
    ship), checked against the game; ValueError if it cannot play it. An agent of another game,
    or a policy made for other rules or another player count, is refused here, before play."""
    agent = make_agent(spec, seed=seed, game=game, players=num_players)
    game.check_agent(agent, num_players)
    return agent


def build_estimator(spec: str, game: games.Game, num_players: int):
    """The policy agent whose value network estimates your win chance (--estimate), checked
    against the game; ValueError if the spec is not a policy with a value network."""
    agent = _agent(game, spec, num_players)
    if not callable(getattr(agent, "win_chance", None)):
        raise ValueError(f"{spec}: not a policy file")
    if not agent.has_value:
        raise ValueError(f"{spec}: {agent.path} holds no value network (files exported before it was kept)")
    return agent


def print_catalog() -> None:
    """The shipped policies, one line each: name, rules, players and file (or that it is missing)."""
    print("Shipped trained policies (use the name, or 'trained' for the game's own, as an opponent):")
    for line in catalog_lines(catalog_rows()):
        print(line)


def catalog_lines(rows: list[dict]) -> list[str]:
    """The catalog rows as aligned lines, each column as wide as its longest entry."""
    width = {key: max((len(row[key]) for row in rows), default=0) for key in ("name", "rules")}
    return [
        f"  {row['name']:<{width['name']}}  rules {row['rules']:<{width['rules']}}  {row['players']} players  "
        + (row["path"] if row["present"] else f"{row['path']} (missing)")
        for row in rows
    ]


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C at any moment: a message, not a traceback
        print("\nGame abandoned: interrupted.")
        return 130


def parse_args(argv: list[str] | None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    p = argparse.ArgumentParser(
        prog="sorry-play", description="Play Sorry! (or another registered game) in the terminal against agents."
    )
    p.add_argument(
        "--game",
        default=None,
        help="the registered game to play, one of "
        + ", ".join(f"{kind.id} ({kind.long_name})" for kind in games.builtin_game_types())
        + " (default: the first); each game takes its own agent specs",
    )
    p.add_argument("--players", type=int, default=2, help="players (default 2)")
    p.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="AGENT",
        help=f"agent names of the game, policy files, shipped policy names (--list) or {TRAINED!r} (the shipped "
        "policy for this game), one per opponent in turn order after you, or one for all "
        f"(default: the first the game offers of {', '.join(QUICK_AGENTS)})",
    )
    p.add_argument("--list", action="store_true", help="list the shipped trained policies and exit")
    p.add_argument(
        "--estimate",
        nargs="?",
        const=TRAINED,
        metavar="POLICY",
        help="show a policy's estimate of your win chance before each of your moves "
        "(default: the shipped policy for this game)",
    )
    p.add_argument("--seat", type=int, help="your seat (default: the first seat in play; you are Red at seat 0)")
    p.add_argument(
        "--rules",
        default=None,
        metavar="RULES",
        help=f"the game's rules, one of its variants (default: its first; the board game's: {', '.join(PRESETS)})",
    )
    p.add_argument("--seed", type=int, default=0, help="shuffles the pack (rolls the dice) and picks who starts")
    p.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help="call the game a draw after this many of its turns (the board game: cards; default: the game's own limit)",
    )
    args = p.parse_args(argv)
    if (args.max_turns is not None and args.max_turns < 1) or args.seed < 0:
        p.error("--max-turns must be at least 1 and --seed at least 0")
    return p, args


def _main(argv: list[str] | None = None) -> int:
    p, args = parse_args(argv)
    game_id = games.default_game_id() if args.game is None else args.game
    try:
        kind = games.game_type(game_id)
    except ValueError as exc:  # an unknown game id
        p.error(f"--game {game_id[:60]}: {exc}")
    try:
        game = games.load_game(game_id, args.rules)
    except ValueError as exc:  # a variant the game does not have
        p.error(f"argument --rules: invalid choice: {args.rules[:60]!r} ({exc})")
    if (args.list and not kind.policy_files) or (args.estimate is not None and not kind.shipped_policies):
        p.error(f"--list and --estimate name a game's shipped policies; {kind.long_name} has none")
    if args.list:
        print_catalog()
        return 0
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")  # a stray non-UTF-8 byte is a wrong answer, not a crash
    max_turns = kind.max_turns if args.max_turns is None else args.max_turns
    try:
        players, human_seat, opponents = seat_opponents(
            game,
            args.players,
            args.seat,
            args.opponents or [first_offered(game_id)],
            args.seed,
            lambda spec, players, seed: (os.path.basename(spec), _agent(game, spec, players, seed)),  # a file: its name
        )
    except ValueError as exc:
        p.error(f"--{exc}")
    try:
        estimator = None if args.estimate is None else build_estimator(args.estimate, game, players)
    except ValueError as exc:
        p.error(f"--estimate: {exc}")
    set_torch_threads()  # policies answer one position at a time: one thread (SORRY_TORCH_THREADS to change)

    table = Table(game, players, human_seat, opponents, args.seed, max_turns)
    view = table.shown
    print(f"Playing {kind.long_name} (rules {game.variant_name}).")
    print(
        f"You are {view.seat_name(human_seat)} (seat {human_seat}). Opponents: "
        + ", ".join(f"{view.seat_name(s)} = {label}" for s, (label, _) in opponents.items())
    )
    try:
        play(table, estimator=estimator)
    except Quit as why:
        print(f"\nGame abandoned: {why}.")
        return 1
    print(table.result_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
