"""Uniformly random legal play."""

from .base import Agent, Turn


class RandomAgent(Agent):
    name = "random"
    game_ids = None  # it reads only turn.legal: every registered game

    def __init__(self, seed: int | None = None):
        self.reset(seed)

    def act(self, turn: Turn) -> int:
        return int(turn.legal[self.rng.integers(len(turn.legal))])
