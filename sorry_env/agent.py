"""The agent interface of every registered game (:mod:`sorry_env.games`): :class:`Agent`
(``reset(seed)``, ``act(turn)``, ``check_game``), :class:`ChoosingAgent` (an agent that
skips its search when one move is legal), :class:`Turn`, what an agent of the board
game is shown when it must act, :class:`GameTurn`, the same for every other game, and
:class:`CallableAgent` (a function of the observation dict as an agent).

It lives in the core so that a game's own agents (e.g. a game folder's ``agents.py``, named
by its ``GameType.agents_module``) and the envs that take agents as opponents
(:mod:`sorry_env.gym_env`) need nothing from ``sorry_env.agents``;
``sorry_env.agents.base`` re-exports these names from here, so there is one class object each.

An agent of the board game sees a :class:`Turn`: the acting seat, the rules, the legal
actions and a *public* engine state. The public state is a copy whose hidden parts (the
order of the draw pile and the generator that would reshuffle it) are scrambled, so an agent
can use the engine for search but cannot peek at the next card.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import numpy as np

from . import games
from .board import engine as E
from .board import game
from .board.rules import Rules, get_rules
from .checks import is_integer


class Agent:
    """Base class: subclasses set `name` and implement `act`."""

    name = "agent"
    # The registered games (sorry_env.games ids) this agent plays; None: every game (it reads
    # only what every turn has: the legal actions, the observation dict). The board game's
    # agents read its Turn (the rules, the engine state), so that is the default.
    game_ids: tuple[str, ...] | None = ("sorry",)

    def reset(self, seed: int | None = None) -> None:
        """Start a new game; search agents reseed here so a seed fixes their play."""
        self.rng = np.random.default_rng(seed)

    def act(self, turn: Any) -> int:
        """The chosen legal action for `turn` (a board-game ``Turn`` or a :class:`GameTurn`)."""
        raise NotImplementedError

    def check_game(self, rules: Any, num_players: int) -> None:
        """ValueError if this agent cannot play this game with this many players (an agent
        that loads a network made for another game overrides this); callers check before the
        first game, so a mismatch is reported before any play. `rules` is the board game's
        ``Rules`` (or preset name) for the board game, and the :class:`sorry_env.games.Game`
        for every other registered game."""

    def check_game_id(self, game_id: str) -> None:
        """ValueError unless this agent plays the registered game `game_id` (:attr:`game_ids`)."""
        if self.game_ids is not None and game_id not in self.game_ids:
            theirs = " or ".join(games.game_type(g).long_name for g in self.game_ids)
            raise ValueError(f"agent {self.name!r} plays {theirs}; it cannot play {games.game_type(game_id).long_name}")


class ChoosingAgent(Agent):
    """An agent that computes its choice among several legal moves (`choose`); a lone legal
    move is played at once, without spending search time on it (the search agents of every
    game)."""

    def act(self, turn: Any) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        if len(legal) == 1:
            return int(legal[0])
        return int(self.choose(turn, legal))

    def choose(self, turn: Any, legal: np.ndarray) -> int:
        """The chosen action of `legal` (turn.legal as int64, at least two of them)."""
        raise NotImplementedError


def public_view(state: np.ndarray, rules: Rules, rng: np.random.Generator) -> np.ndarray:
    """A copy of `state` with everything the acting player cannot see re-drawn from `rng`:
    the draw-pile order, the other players' hands (play for points; dealt again from the
    unseen cards) and the generator state."""
    return game.public_view(state, rules, rng)  # one home: sorry_env.board.game


@dataclasses.dataclass(frozen=True)
class Turn:
    """What an agent of the board game is shown when it must act."""

    state: np.ndarray  # public engine state (see public_view); the card to play is in it
    rules: Rules
    seat: int
    legal: np.ndarray  # legal action indices, sorted

    @classmethod
    def from_state(
        cls, state: np.ndarray, rules: Rules | str, rng: np.random.Generator, legal: np.ndarray | None = None
    ) -> Turn:
        """The turn of the seat to move in the true game `state`, with everything that seat
        cannot see re-drawn from `rng` (:func:`public_view`). The one way to build a Turn
        from a real game, so no caller can hand an agent the draw order by mistake.
        `legal` may pass the legal actions when the caller already has them."""
        rules = get_rules(rules)
        if legal is None:
            legal = game.legal_actions(state, rules)
        return cls(public_view(state, rules, rng), rules, int(E.to_move(state)), np.asarray(legal, dtype=np.int64))

    @property
    def game(self) -> games.Game:
        """This turn's game in the registry's API (what the agents written once for every game
        search with: :class:`sorry_env.games.Game`)."""
        from .board.board_game import SorryGame

        return SorryGame(self.rules)

    @property
    def num_players(self) -> int:
        return len(game.seats(self.state))

    def observation(self) -> dict:
        """The env's observation dict for this seat (for callable and policy agents)."""
        return observation_dict(self)


@dataclasses.dataclass(frozen=True)
class GameTurn:
    """What an agent of a registered game other than the board game is shown when it must act."""

    game: games.Game
    state: np.ndarray  # the game's public view for the seat to move (games.Game.public_view)
    seat: int
    legal: np.ndarray  # legal action indices, ascending

    @classmethod
    def from_state(
        cls, game: games.Game, state: np.ndarray, rng: np.random.Generator, legal: np.ndarray | None = None
    ) -> GameTurn:
        """The turn of the seat to move in the true game `state`, with everything that seat
        cannot see re-drawn from `rng`: the one way to build a GameTurn from a real game, so
        no caller can hand an agent the hidden chance by mistake. `legal` may pass the legal
        actions when the caller already has them."""
        if legal is None:
            legal = game.legal_actions(state)
        return cls(game, game.public_view(state, rng), game.to_move(state), np.asarray(legal, dtype=np.int64))

    @property
    def num_players(self) -> int:
        return len(self.game.seats(self.state))

    @property
    def rules(self) -> Any:
        """What ``Agent.check_game`` is given as the game played (``Game.agent_rules``)."""
        return self.game.agent_rules

    def observation(self) -> dict:
        """The env's observation dict for this seat (for callable and policy agents)."""
        return observation_dict(self)


def observation_dict(turn: Turn | GameTurn) -> dict:
    """The env's observation dict of the `turn`'s seat, with its legal actions as the mask:
    what either kind of turn shows an agent that reads it."""
    played = turn.game
    mask = np.zeros(played.num_actions, dtype=np.int8)
    mask[turn.legal] = 1
    return {"observation": played.observation(turn.state, turn.seat), "action_mask": mask}


class CallableAgent(Agent):
    """A function as an agent: `fn` gets the acting seat's observation dict (the PettingZoo
    env's: ``{"observation": float32[OBS_SIZE], "action_mask": int8[n_actions]}``, built by
    the same encoder) and returns an action index. Whoever plays it checks the action."""

    game_ids = None  # every registered game's turn has an observation dict

    def __init__(self, fn, name: str | None = None, seed=None):
        if not callable(fn):
            raise TypeError(f"an opponent function must be callable, got {fn!r}")
        self.fn = fn
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.reset(seed)

    def act(self, turn: Turn | GameTurn) -> int:
        action = self.fn(turn.observation())
        try:
            return int(np.asarray(action).item())  # numpy scalars and 1-element arrays (sb3's predict)
        except (TypeError, ValueError):
            raise ValueError(f"agent {self.name!r} returned {action!r}, not an action index") from None


def agent_label(agent: Any) -> str:
    """A short display name: a file spec's file name; a spec with settings with any file paths
    in them shortened to file names (``montecarlo:value=v.safetensors``); else the spec, or
    the agent's name."""
    if isinstance(agent, str):
        name, colon, settings = agent.partition(":")
        if not colon or "=" not in settings:  # a file, a bare name, or package.module:Name
            return os.path.basename(agent)
        parts = [item.partition("=") for item in settings.split(",")]
        return name + ":" + ",".join(k + eq + (os.path.basename(v) if "/" in v else v) for k, eq, v in parts)
    if isinstance(agent, Agent):
        return agent.name
    return getattr(agent, "__name__", None) or type(agent).__name__


class IllegalMove(ValueError):
    """An agent answered a turn with something that is not one of the legal actions: found
    during play, after every check of the setup passed (a command reports it as a failure of
    the run, not of its arguments)."""


def checked_action(action: Any, legal: np.ndarray, who: str, where: str = "") -> int:
    """`action`, an agent's answer, as an int if it is one of the `legal` actions; otherwise a
    ValueError naming `who` chose it and `where` (e.g. "in game 3"). act() returns a Python or
    numpy integer: anything else (an array, None, a bool) is refused as not an action index.
    Raises :class:`IllegalMove`, a ValueError."""
    where = f" {where}" if where else ""
    if not is_integer(action):
        shown = repr(action) if len(repr(action)) <= 60 else repr(action)[:60] + "..."
        raise IllegalMove(
            f"{who} returned {shown} ({type(action).__name__}){where}, not an action index: "
            "act() returns an int, one of turn.legal"
        )
    if int(action) not in legal.tolist():
        raise IllegalMove(f"{who} chose illegal action {int(action)}{where}; legal: {legal.tolist()}")
    return int(action)


def one_per_seat(items: list, seats: int, what: str) -> list:
    """`items` for `seats` seats: one item stands for every seat, or one item each; a
    ValueError naming the counts otherwise (`what`: what they are, for the message)."""
    if len(items) == 1:
        return list(items) * seats
    if len(items) != seats:
        counts = "1" if seats == 1 else f"1 (for every seat) or {seats}"
        raise ValueError(f"{what}: give {counts}, got {len(items)}")
    return list(items)


def agent_turn(game: games.Game, state: np.ndarray, rng: np.random.Generator, legal=None) -> Turn | GameTurn:
    """What the agent of the seat to move in the true `state` of `game` is shown, everything
    that seat cannot see re-drawn from `rng`: a :class:`GameTurn`, or a :class:`Turn` for a
    game whose agents read its own rules object (``Game.agent_rules``: the board game's Rules,
    for its search and afterstates)."""
    rules = game.agent_rules
    return GameTurn.from_state(game, state, rng, legal) if rules is game else Turn.from_state(state, rules, rng, legal)
