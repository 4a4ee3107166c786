"""What the terminal and browser games share: asking a person to pick one of a numbered list,
the opponents' seats in turn order after the person's, a game's default opponent and what an
agent is shown when it must move."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sorry_env.agent import one_per_seat
from sorry_env.agents import agents_of_game

# A game's default opponent and hint agent (and the browser game's fallback when a search runs
# out of time): the first of these the game offers (its own heuristic, else the generic one-ply
# greedy, else random play).
QUICK_AGENTS = ("heuristic", "greedy", "random")


def first_offered(game_id: str, names: tuple[str, ...] = QUICK_AGENTS) -> str:
    """The first of `names` the registered game `game_id` offers as an agent."""
    offered = agents_of_game(game_id)
    return next(name for name in names if name in offered)


class Quit(Exception):
    """The player typed q or the input ended."""


def ask_choice(options: Sequence[str], read: Callable[[str], str] = input) -> int:
    """The index of the option the person picks, after listing `options` numbered from 1;
    re-asks until the answer is a listed number (``q`` raises :class:`Quit`)."""
    for k, text in enumerate(options, start=1):
        print(f"  {k:2d}. {text}")
    count = len(options)
    while True:
        try:
            answer = read(f"Your move (1-{count}, q to quit): ").strip()
        except EOFError:
            raise Quit("input ended") from None
        except UnicodeDecodeError:  # only if stdin could not be set to replace bad bytes
            answer = "\ufffd"
        if answer.lower() in ("q", "quit", "exit"):
            raise Quit("you quit")
        # At most 6 digits before int(): Python refuses to convert more than 4,300.
        if answer.isascii() and answer.isdigit() and len(answer) <= 6 and 1 <= int(answer) <= count:
            return int(answer) - 1
        shown = repr(answer) if len(answer) <= 40 else repr(answer[:40]) + f"... ({len(answer)} characters)"
        print(f"{shown} is not one of the moves: type a number from 1 to {count}, or q to quit.")


def seats_after(specs: list, seats: Sequence[int], human_seat: int) -> list[tuple[int, Any]]:
    """(seat, spec) for every seat but the person's, in turn order after it: one spec for all,
    or one each; ValueError naming the counts otherwise (the terminal and the browser games
    both seat opponents this way)."""
    others = [seats[(list(seats).index(human_seat) + k) % len(seats)] for k in range(1, len(seats))]
    specs = one_per_seat(specs, len(others), f"opponents for {len(seats)} players (the seats after yours)")
    return list(zip(others, specs))
