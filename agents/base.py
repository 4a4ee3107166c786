"""The one agent interface used everywhere: evaluation, training opponents, the play command.
:class:`Agent`, :class:`ChoosingAgent`, the board game's :class:`Turn`, :class:`GameTurn`
(the other registered games) and :class:`CallableAgent` live in :mod:`sorry_env.agent`
(re-exported here: one class object each).
"""

from __future__ import annotations

# The one interface of every game (re-exported).
from sorry_env.agent import Agent, CallableAgent, ChoosingAgent, GameTurn, Turn, public_view

__all__ = ["Agent", "CallableAgent", "ChoosingAgent", "GameTurn", "Turn", "public_view"]
