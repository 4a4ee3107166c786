"""The agent interface of every registered game (:mod:`sorry_env.games`): :class:`Agent`
(``reset(seed)``, ``act(turn)``, ``check_game``) and :class:`GameTurn`, what an agent of a game
other than the board game is shown when it must act.

It lives in the core so that a game's own agents (e.g. a game folder's ``agents.py``, named
by its ``GameType.agents_module``) can be written beside the game without importing
``sorry_env.agents``. The board game's agents act on ``sorry_env.agents.base.Turn`` (the
same interface, with the rules in it); ``sorry_env.agents.base`` re-exports :class:`Agent`
from here, so there is one class object.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from . import games


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

    def observation(self) -> dict:
        """The env's observation dict for this seat (for callable and policy agents)."""
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        mask[self.legal] = 1
        return {"observation": self.game.observation(self.state, self.seat), "action_mask": mask}
