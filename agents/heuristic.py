"""`heuristic`: a hand-written player. It tries every legal move with the engine and keeps the
one whose resulting position scores best under :mod:`sorry_env.agents.evaluation` (bumps against the
leader, slides, safety and Home, threats weighted by the remaining deck, the backward
shortcut; the weights are :class:`sorry_env.agents.evaluation.Weights`)."""

import numpy as np
from numba import njit

from sorry_env import engine as E
from sorry_env import game

from .base import ChoosingAgent, Turn
from .evaluation import DEFAULT_WEIGHTS, Weights, seat_equities, seat_score
from .simulate import after_move_into


@njit(cache=True)
def heuristic_choice(state, rules, w, legal, n):
    """The legal action (of legal[:n]) whose resulting position scores best for the player
    to move; the first one on ties."""
    me = E.to_move(state)
    child = np.empty_like(state)
    equity = np.empty(4)
    best_action = legal[0]
    best = -np.inf
    for k in range(n):
        after_move_into(child, state, rules, legal[k])
        seat_equities(child, rules, w, equity)
        score = seat_score(child, rules, w, equity, me)
        if score > best:
            best = score
            best_action = legal[k]
    return best_action


class HeuristicAgent(ChoosingAgent):
    name = "heuristic"

    def __init__(self, seed: int | None = None, weights: Weights = DEFAULT_WEIGHTS):
        self.weights = weights.array()
        self.reset(seed)

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        return int(heuristic_choice(turn.state, game.rules_array(turn.rules), self.weights, legal, len(legal)))
