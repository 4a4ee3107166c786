"""Play Sorry! in the terminal against scripted agents and trained policies (any other
registered game with ``--game ID``: :mod:`sorry_env.agents.play.game_terminal`).

    sorry-play                                         # you vs the heuristic, 2 players
    sorry-play --players 4 --opponents heuristic random checkpoints/sorry-4p.safetensors
    sorry-play --opponents checkpoints/sorry-2p.safetensors --seed 7
    sorry-play --rules hasbro2013 --players 4 --opponents trained   # the shipped policy for that game
    sorry-play --list                                  # the shipped policies (agents.catalog)

``--opponents`` lists the other seats in turn order after yours (one entry: every opponent
is that agent); each entry is an agent name, a policy file, a shipped policy's catalog name
(``hasbro2013-4p``) or ``trained``: the shipped policy for the game's rules and player count.
``--estimate`` prints, before each of your moves, the win chance a policy file's value
network gives you (the shipped policy of the game unless ``--estimate FILE`` names one). The board is drawn before each
of your moves, your legal moves are listed in words, and you answer with a move's number
(``q`` quits). Opponents' moves are printed as they happen.

Every move is told with its consequences (bumps and whose pawn went back to Start, slides
and who was swept off them, pawns reaching Home, swaps), in the words of
:mod:`sorry_env.narrate`; your options are listed the same way before you choose. A move of
yours that is forced (the only legal one) plays itself, with one line saying what happened.
Pawns keep their label (``R1`` .. ``R4``) all game, and the square numbers in the texts are
printed round the board's edge. Under play for points your hand is shown with the board.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable

import numpy as np

from sorry_env import engine as E
from sorry_env import game, games
from sorry_env.agents import AGENTS, Turn, make_agent, set_torch_threads
from sorry_env.agents.catalog import TRAINED, catalog_rows, resolve_spec
from sorry_env.narrate import PawnLabels, narrate, option_text
from sorry_env.render import COLOUR_NAMES, render_ansi
from sorry_env.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, PRESETS, Rules, get_rules

from .prompt import Quit, ask_choice, seats_after

__all__ = ["Quit", "ask_move", "build_opponents", "distinct_options", "main", "play"]


def distinct_options(state: np.ndarray, rules: Rules | str, legal: np.ndarray) -> np.ndarray:
    """`legal` with each distinct outcome once: of actions leading to the same position
    (sorry_env.game.equivalent_actions, e.g. a split seven's two orders), the first is kept."""
    group_of = {a: k for k, group in enumerate(game.equivalent_actions(state, rules)) for a in group}
    seen: set[int] = set()
    kept = []
    for action in legal:
        group = group_of.get(int(action), -1 - int(action))  # not legal here: kept as it is
        if group not in seen:
            seen.add(group)
            kept.append(int(action))
    return np.array(kept, dtype=np.int64)


def ask_move(
    state: np.ndarray,
    rules: Rules | str,
    legal: np.ndarray,
    read: Callable[[str], str] = input,
    labels: PawnLabels | None = None,
) -> int:
    """The action the person picks from `legal`; re-asks until the answer is a listed number.
    Options are told with their consequences (pawns named by `labels`, a PawnLabels)."""
    labels = labels if labels is not None else PawnLabels(state, rules)
    legal = distinct_options(state, rules, legal)
    options = [option_text(state, rules, int(action), labels) for action in legal]
    return int(legal[ask_choice(options, read)])


def play(
    human_seat: int,
    opponents: dict,
    rules: Rules | str,
    num_players: int,
    seed: int,
    max_turns: int,
    read: Callable[[str], str] = input,
    estimator=None,
) -> int | None:
    """One game; `opponents` maps each other seat to (label, agent). Returns the winner seat
    (None if the game was truncated). `estimator` (a PolicyAgent with a value network) adds
    its win-chance estimate for you before each of your moves."""
    rng = np.random.default_rng(seed)
    state = game.new_state(rules, num_players, seed=seed)
    ppp = rules.pawns_per_player
    labels = PawnLabels(state, rules)  # stable pawn names for the whole game
    hand = human_seat if rules.hand_size else None  # your hand is shown; the others' stay hidden
    teams = rules.teams != "none"
    while E.is_running(state, max_turns):
        seat = int(E.to_move(state))
        legal = game.legal_actions(state, rules)
        forced = seat == human_seat and len(distinct_options(state, rules, legal)) == 1
        if seat == human_seat and not forced:
            print("\n" + render_ansi(state, ppp, labels, hand, teams, rules.fire_ice))
            if estimator is not None:
                chance = estimator.win_chance(state, rules, human_seat)
                print(f"Win chance ({estimator.name}): {chance:.0%}")
            action = ask_move(state, rules, legal, read, labels)
        elif seat == human_seat:
            action = int(legal[0])  # forced: no question to ask
        else:
            agent = opponents[seat][1]
            action = agent.act(Turn.from_state(state, rules, rng, legal))
        before = state.copy()
        E.step(state, game.rules_array(rules), int(action))
        move = labels.advance(before, int(action), state)
        text = narrate(before, rules, int(action), move, labels.previous)[len(COLOUR_NAMES[seat]) :]
        if seat == human_seat:  # "Red plays 5: ..." -> "You play 5: ..."
            text = "You" + text.replace(" plays ", " play ", 1).replace(" discards ", " discard ", 1)
            print(text + (" (forced: your only move)" if forced else ""))
        else:
            print(f"{COLOUR_NAMES[seat]} ({opponents[seat][0]}){text}")
    print("\n" + render_ansi(state, ppp, labels, hand, teams, rules.fire_ice))
    return game.winner(state)


def build_opponents(
    specs: list[str], seats: tuple[int, ...], human_seat: int, rules: Rules | str, num_players: int, seed: int
) -> dict:
    """seat -> (label, agent) for the seats other than the human's, in turn order after it.
    A policy made for other rules or another player count is refused here, before play."""
    opponents = {}
    for k, (seat, spec) in enumerate(seats_after(specs, seats, human_seat)):
        agent = make_agent(resolve_spec(spec, rules, num_players), seed=seed + 1 + k)
        agent.check_game(rules, num_players)
        opponents[seat] = (os.path.basename(spec), agent)  # a policy file shows as its file name
    return opponents


def build_estimator(spec: str, rules: Rules, num_players: int):
    """The policy agent whose value network estimates your win chance (--estimate), checked
    against the game; ValueError if the spec is not a policy with a value network."""
    from sorry_env.agents.specs import needs_torch

    agent = make_agent(resolve_spec(spec, rules, num_players))
    if not isinstance(agent, needs_torch("policy").PolicyAgent):
        raise ValueError(f"{spec}: not a policy file")
    agent.check_game(rules, num_players)
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
    name_width = max((len(row["name"]) for row in rows), default=0)
    rules_width = max((len(row["rules"]) for row in rows), default=0)
    return [
        f"  {row['name']:<{name_width}}  rules {row['rules']:<{rules_width}}  {row['players']} players  "
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
    others = [kind for kind in games.builtin_game_types() if kind.id != "sorry"]
    p.add_argument(
        "--game",
        default="sorry",
        help="the registered game to play: sorry (the board game, default) or "
        + ", ".join(f"{kind.id} ({kind.long_name})" for kind in others)
        + "; the other games take their own agent specs (random, greedy, their own agents, their policy files)",
    )
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument(
        "--opponents",
        nargs="+",
        default=None,
        metavar="AGENT",
        help=f"agent names ({', '.join(sorted(AGENTS))}), policy files, shipped policy names (--list) "
        f"or {TRAINED!r} (the shipped policy for this game), one per opponent in turn order after you, or one for all "
        "(default: heuristic; with --game, the game's heuristic, else greedy)",
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
        help=f"the board game's rules, one of {', '.join(sorted(PRESETS))} (default {DEFAULT_PRESET}); "
        "with --game, one of that game's variants",
    )
    p.add_argument("--seed", type=int, default=0, help="shuffles the pack (rolls the dice) and picks who starts")
    p.add_argument(
        "--max-turns",
        type=int,
        default=None,
        help=f"call the game a draw after this many cards (default {DEFAULT_MAX_TURNS}; with --game, that "
        "many of the game's turns, default its own limit)",
    )
    args = p.parse_args(argv)
    if (args.max_turns is not None and args.max_turns < 1) or args.seed < 0:
        p.error("--max-turns must be at least 1 and --seed at least 0")
    return p, args


def _main(argv: list[str] | None = None) -> int:
    p, args = parse_args(argv)
    if args.game != "sorry":
        return _play_other_game(p, args)
    if args.rules is not None and args.rules not in PRESETS:
        p.error(f"argument --rules: invalid choice: {args.rules!r} (choose from {', '.join(sorted(PRESETS))})")
    args.rules = args.rules or DEFAULT_PRESET
    args.max_turns = DEFAULT_MAX_TURNS if args.max_turns is None else args.max_turns
    args.opponents = args.opponents or ["heuristic"]
    if args.list:
        print_catalog()
        return 0
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")  # a stray non-UTF-8 byte is a wrong answer, not a crash

    rules = get_rules(args.rules)
    try:
        seats = game.seats_for(args.players, rules=rules)
    except ValueError as e:
        p.error(f"--players {args.players} --rules {args.rules}: {e}")
    human_seat = seats[0] if args.seat is None else args.seat
    if human_seat not in seats:
        p.error(f"--seat must be one of the seats in play {list(seats)}")
    try:
        opponents = build_opponents(args.opponents, seats, human_seat, rules, args.players, args.seed)
    except ValueError as exc:
        p.error(f"--opponents: {exc}")
    try:
        estimator = None if args.estimate is None else build_estimator(args.estimate, rules, args.players)
    except ValueError as exc:
        p.error(f"--estimate: {exc}")
    set_torch_threads()  # policies answer one position at a time: one thread (SORRY_TORCH_THREADS to change)

    print(
        f"You are {COLOUR_NAMES[human_seat]} (seat {human_seat}). Opponents: "
        + ", ".join(f"{COLOUR_NAMES[s]} = {label}" for s, (label, _) in opponents.items())
    )
    try:
        winner = play(human_seat, opponents, rules, args.players, args.seed, args.max_turns, estimator=estimator)
    except Quit as why:
        print(f"\nGame abandoned: {why}.")
        return 1
    if winner is None:
        print(f"No winner after {args.max_turns} cards: a draw.")
    elif game.same_side(rules, human_seat, winner):
        print("You win!" if winner == human_seat else f"Your team wins ({COLOUR_NAMES[winner]} finished).")
    else:
        print(f"{COLOUR_NAMES[winner]} ({opponents[winner][0]}) wins.")
    return 0


def _play_other_game(p: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """``--game ID``: any registered game but the board game (agents.play.game_terminal)."""
    from .game_terminal import run

    try:
        chosen = games.load_game(args.game, args.rules)
    except ValueError as exc:  # an unknown game id, or a variant the game does not have
        p.error(f"--game {args.game[:60]}{'' if args.rules is None else ' --rules ' + args.rules[:60]}: {exc}")
    if hasattr(sys.stdin, "reconfigure"):
        sys.stdin.reconfigure(errors="replace")  # a stray non-UTF-8 byte is a wrong answer, not a crash
    return run(chosen, args, p.error)


if __name__ == "__main__":
    sys.exit(main())
