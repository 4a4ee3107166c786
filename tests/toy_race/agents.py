"""The toy race's own agents module (its GameType.agents_module): only the evaluation the
generic ``greedy`` ranks moves by, so greedy plays it without an agent written for it."""

from __future__ import annotations

import numpy as np

from . import N_PLAYERS, POS, WINNER

AGENTS: dict = {}  # no agents of its own: random, greedy and policy files are the generic ones


def evaluation(state: np.ndarray, seat: int) -> int:
    """A win first, then the lead over the best other counter."""
    if state[WINNER] >= 0:
        return 1000 if state[WINNER] == seat else -1000
    others = [int(state[POS + k]) for k in range(int(state[N_PLAYERS])) if k != seat]
    return int(state[POS + seat]) - max(others)
