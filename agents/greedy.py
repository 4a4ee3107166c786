"""`greedy`: for the board game (:class:`GreedyAgent`) the move with the most immediate
progress of its own pawns, Home and the safety zone first (the board game's compiled
:func:`sorry_env.board.scripted_choices.greedy_choice`).
Moves are tried with the engine, so bumps and slides count as they happen. For every other
game (:class:`RankingGreedyAgent`, written once over the registry's API) the move whose result
ranks highest by the game's own evaluation."""

from collections.abc import Callable
from typing import Any

import numpy as np

from sorry_env.board import game
from sorry_env.board.scripted_choices import greedy_choice

from .base import ChoosingAgent, Turn


class GreedyAgent(ChoosingAgent):
    name = "greedy"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        return int(greedy_choice(turn.state, game.rules_array(turn.rules), legal, len(legal)))


class RankingGreedyAgent(ChoosingAgent):
    """One ply: tries every legal action with the game's ``after_move`` and keeps the first, in
    action order, whose result ranks highest by `evaluation(state, seat)` (the game's own
    ranking: ``evaluation`` in its agents module)."""

    name = "greedy"
    game_ids = None  # any game that offers an evaluation (agents.agents_of_game offers it only then)

    def __init__(self, seed: int | None = None, evaluation: Callable[[np.ndarray, int], Any] | None = None):
        if not callable(evaluation):
            raise TypeError(f"greedy needs the game's evaluation function, got {evaluation!r}")
        self.evaluation = evaluation
        self.reset(seed)

    def choose(self, turn, legal: np.ndarray) -> int:
        best_action, best = int(legal[0]), None
        for action in legal:
            score = self.evaluation(turn.game.after_move(turn.state, int(action)), turn.seat)
            if best is None or score > best:
                best_action, best = int(action), score
        return best_action


__all__ = ["GreedyAgent", "RankingGreedyAgent", "greedy_choice"]
