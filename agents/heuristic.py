"""`heuristic`: a hand-written player. It tries every legal move with the engine and keeps the
one whose resulting position scores best under :mod:`sorry_env.board.evaluation` (bumps against the
leader, slides, safety and Home, threats weighted by the remaining deck, the backward
shortcut; the weights are :class:`sorry_env.board.evaluation.Weights`). The compiled choice is the
board game's own, :func:`sorry_env.board.scripted_choices.heuristic_choice`."""

import numpy as np

from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, Weights
from sorry_env.board.scripted_choices import heuristic_choice

from .base import ChoosingAgent, Turn


class HeuristicAgent(ChoosingAgent):
    name = "heuristic"

    def __init__(self, seed: int | None = None, weights: Weights = DEFAULT_WEIGHTS):
        self.weights = weights.array()
        self.reset(seed)

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        rules = game.rules_array(turn.rules)
        return int(heuristic_choice(turn.state, rules, self.weights, legal, len(legal), *game.extras_args(turn.rules)))


__all__ = ["HeuristicAgent", "heuristic_choice"]
