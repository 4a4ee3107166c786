"""The one agent interface used everywhere: evaluation, training opponents, the play command.
:class:`Agent`, the board game's :class:`Turn`, :class:`GameTurn` (the other registered
games) and :class:`CallableAgent` live in :mod:`sorry_env.agent` (re-exported here: one class
object each); this module adds :class:`ChoosingAgent`.
"""

from __future__ import annotations

import numpy as np

# The one interface of every game (re-exported).
from sorry_env.agent import Agent, CallableAgent, GameTurn, Turn, public_view


class ChoosingAgent(Agent):
    """An agent that computes its choice among several legal moves (`choose`); a lone legal
    move is played at once, without spending search time on it."""

    def act(self, turn: Turn) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        if len(legal) == 1:
            return int(legal[0])
        return int(self.choose(turn, legal))

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        raise NotImplementedError


__all__ = ["Agent", "CallableAgent", "ChoosingAgent", "GameTurn", "Turn", "public_view"]
