"""`playouts`: flat Monte Carlo written once for every registered game over the registry's
functional API (:class:`sorry_env.games.Game`), so a new game has a search agent at once."""

from __future__ import annotations

import numpy as np

from .base import ChoosingAgent

MAX_PLAYOUTS = 100_000  # per decision: a setting beyond it is a typo, not a stronger agent


class PlayoutAgent(ChoosingAgent):
    """Flat Monte Carlo written once for every registered game: each legal action is tried in
    ``playouts`` worlds, each a fresh :meth:`~sorry_env.games.Game.public_view` of the turn
    (what the player cannot see, the coming chance included, re-drawn), played on to the end
    with uniformly random moves; the action whose worlds the player's seat won most often is
    chosen (ties: the first in action order). It uses nothing but the registry's functional
    API, so a new game has it at once; games with their own search (an agents module's
    ``montecarlo``) are stronger at the same cost."""

    name = "playouts"
    game_ids = None  # every registered game

    def __init__(self, seed: int | None = None, playouts: int = 50, max_turns: int = 0):
        if not 1 <= playouts <= MAX_PLAYOUTS:
            raise ValueError(f"playouts must be in 1..{MAX_PLAYOUTS:,}, got {playouts}")
        if max_turns < 0:
            raise ValueError(f"max_turns must be at least 0 (0: the game's own limit), got {max_turns}")
        self.playouts = playouts
        self.max_turns = max_turns
        self.reset(seed)

    def choose(self, turn, legal: np.ndarray) -> int:
        game = turn.game
        limit = self.max_turns or game.game_type.max_turns
        wins = np.zeros(len(legal))
        for k, action in enumerate(legal):
            for _ in range(self.playouts):
                world = game.apply(game.public_view(turn.state, self.rng), int(action))
                while game.is_running(world, limit):
                    world = game.apply(world, int(self.rng.choice(game.legal_actions(world))))
                wins[k] += game.winner(world) == turn.seat
        return int(legal[int(np.argmax(wins))])
