"""`greedy`: the move with the most immediate progress of its own pawns, Home and the safety
zone first (the board game's compiled :func:`sorry_env.scripted_choices.greedy_choice`).
Moves are tried with the engine, so bumps and slides count as they happen."""

import numpy as np

from sorry_env import game
from sorry_env.scripted_choices import greedy_choice

from .base import Agent, Turn


class GreedyAgent(Agent):
    name = "greedy"

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def act(self, turn: Turn) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        return int(greedy_choice(turn.state, game.rules_array(turn.rules), legal, len(legal)))


__all__ = ["GreedyAgent", "greedy_choice"]
