"""What the terminal and browser games share: a new game's seats and opponents, checked
(:func:`seat_opponents`), the game as it is played (:class:`Table`), asking a person to pick
one of a numbered list and a game's default opponent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sorry_env import games
from sorry_env.agent import agent_turn, one_per_seat
from sorry_env.agents import agents_of_game
from sorry_env.checks import excerpt

# A game's default opponent and hint agent (and the browser game's fallback when a search runs
# out of time): the first of these the game offers (its own heuristic, else the generic one-ply
# greedy, else random play).
QUICK_AGENTS = ("heuristic", "greedy", "random")


def first_offered(game_id: str, names: tuple[str, ...] = QUICK_AGENTS) -> str:
    """The first of `names` the registered game `game_id` offers as an agent."""
    offered = agents_of_game(game_id)
    return next(name for name in names if name in offered)


def is_int(value) -> bool:
    """Whether `value` is an integer (not a bool, which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


class Quit(Exception):
    """The game cannot go on: the player typed q, the input ended or an agent chose an illegal move."""


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
        print(f"{excerpt(answer)} is not one of the moves: type a number from 1 to {count}, or q to quit.")


def seat_opponents(
    game: games.Game, players, seat, specs: list, seed: int, build: Callable[[Any, int, int], tuple[str, Any]]
) -> tuple[int, int, dict[int, tuple[str, Any]]]:
    """(players, the person's seat, seat -> (label, agent)) of a new game of `game`: `players`
    one of its counts, `seat` one of the seats in play (None: the first), and an opponent at
    every other seat in turn order after the person's, built by ``build(spec, players, seed)``
    from one spec of `specs` for all or one each (the k-th with the seed ``seed + 1 + k``).
    ValueError naming the field (players, seat, opponents) otherwise; the terminal and the
    browser games both set up a game this way."""
    try:
        players = game.game_type.check_players(players)
        seats = game.seats(game.new_state(players, seed=0))
    except ValueError as exc:
        raise ValueError(f"players: {exc}") from None
    seat = seats[0] if seat is None else seat
    if not is_int(seat) or seat not in seats:
        raise ValueError(f"seat must be one of the seats in play {list(seats)}, got {excerpt(seat)}")
    others = games.seats_after(seats, seat)
    try:
        specs = one_per_seat(specs, len(others), f"opponents for {len(seats)} players (the seats after yours)")
    except ValueError as exc:
        raise ValueError(f"opponents: {exc}") from None
    built = {}
    for k, (other, spec) in enumerate(zip(others, specs)):
        try:
            built[other] = build(spec, players, seed + 1 + k)
        except ValueError as exc:  # name the opponent: with one spec each, the k-th is the culprit
            raise ValueError(f"opponents: opponent {k + 1}: {exc}") from None
    return players, seat, built


class Table:
    """One game of a registered game as a person plays it (the terminal and browser games):
    the person at `human_seat`, labelled agents at the other seats (seat -> (label, agent)),
    the position and what the person is shown of it; `rng` re-draws what an agent may not see."""

    def __init__(
        self, game: games.Game, num_players: int, human_seat: int, opponents: dict, seed: int, max_turns: int, rng=None
    ):
        self.game, self.num_players, self.human_seat, self.opponents = game, num_players, human_seat, opponents
        self.seed, self.max_turns = seed, max_turns
        self.rng = np.random.default_rng(seed) if rng is None else rng
        self.state = game.new_state(num_players, seed=seed)
        self.shown = game.play_view(self.state, human_seat)  # it follows the game: every move goes through its told

    @property
    def over(self) -> bool:
        return not self.game.is_running(self.state, self.max_turns)

    def mover(self) -> int:
        return self.game.to_move(self.state)

    def player_name(self, seat: int) -> str:
        """Who plays at `seat`: "you", or the agent's label."""
        return "you" if seat == self.human_seat else self.opponents[seat][0]

    def result_text(self) -> str:
        """The end of the game in words (the game's play view's)."""
        winner = self.game.winner(self.state)
        return self.shown.result(winner, self.max_turns, "" if winner is None else self.player_name(winner))

    def opponent_action(self) -> int:
        """The action the agent at the seat to move chooses; Quit if it is not a legal one."""
        legal = self.game.legal_actions(self.state)
        label, agent = self.opponents[self.mover()]
        action = agent.act(agent_turn(self.game, self.state, self.rng, legal))
        if action not in legal:
            raise Quit(f"{label} chose action {action!r}, not one of the legal {legal.tolist()}")
        return int(action)

    def move(self, action: int) -> np.ndarray:
        """Play `action` for the seat to move (Game.apply checks it legal); the state before it."""
        before, self.state = self.state, self.game.apply(self.state, action)
        return before
