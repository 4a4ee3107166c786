"""The checks the AEC envs of the registered games (the board game's :mod:`sorry_env.env`, and
the envs of the others' folders) make before a step, in one place so every game refuses bad
calls with the same messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np


class StepChecks:
    """Mixin for an AECEnv holding its engine state in ``self._state`` and the acting agent's
    legal-action mask in ``self._mask``; the env supplies :meth:`_refuse_action`."""

    _state: np.ndarray | None
    _mask: np.ndarray
    # Provided by pettingzoo.AECEnv, which the env class also derives from.
    agents: list[str]
    agent_selection: str
    terminations: dict[str, bool]
    truncations: dict[str, bool]

    if TYPE_CHECKING:  # only for the type checker: a method here would shadow AECEnv's

        def _was_dead_step(self, action: object) -> None: ...

    def _game(self) -> np.ndarray:
        """The engine state, or a clear error before the first reset (the order-enforcing
        wrapper of ``env()`` checks this too; ``raw_env`` users get the same message)."""
        state = getattr(self, "_state", None)
        if state is None:
            raise RuntimeError("call reset() before using the environment")
        return state

    def _refuse_action(self, action) -> None:
        """Raise a ValueError naming the legal actions (each game words its own)."""
        raise NotImplementedError

    def _acting_agent(self, action, n_actions: int) -> str | None:
        """The agent `action` is for, once the step's checks pass; None if the step was a
        finished agent's (PettingZoo's dead step, already taken). Raises on a step before
        reset, after everyone stepped out, or with an action that is not a legal index."""
        self._game()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out; call reset() for a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return None
        if (
            isinstance(action, (bool, np.bool_))
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < n_actions
            or not self._mask[action]
        ):
            self._refuse_action(action)
        return agent
