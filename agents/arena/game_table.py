"""The table of every registered game other than the board game (whose compiled table is
:class:`sorry_env.agents.arena.play.Table`): a lineup's agents playing games by index over the
registry's functional API (:class:`sorry_env.games.Game`), with the same seating and seeds
(:func:`sorry_env.agents.arena.play.start_game`).

Fair seating as there, over the game's seats: game ``g`` puts lineup entry ``i`` in seat
``seats[(i + g) % n]`` and lets seat ``seats[(g // n) % n]`` move first (``Game.new_state``'s
``first``). Everything random in game ``g`` (the game's chance, every agent's reset seed, the
re-drawn hidden parts of the agents' views) comes from ``numpy.random.SeedSequence([seed, g])``.
A game still running after ``max_turns`` of the game's turns (``GameType.turn_unit``) is a draw."""

from __future__ import annotations

from typing import Any

from sorry_env import games
from sorry_env.agent import GameTurn, checked_action

from ..any_game import as_game_agent, check_plays
from .play import start_game
from .stats import agent_labels


def game_seats(game: games.Game, players: int) -> tuple[int, ...]:
    """The seats a game of `players` is played in (the game's own choice, e.g. 0..n-1)."""
    return tuple(game.seats(game.new_state(players, seed=0)))


class GameTable:
    """A lineup's agents of one registered game in one process, able to play any game of the
    tournament by index (the interface of :class:`sorry_env.agents.arena.play.Table`; in its
    `rules` slot the :class:`sorry_env.games.Game` played)."""

    def __init__(self, agent_specs: list, game: games.Game, max_turns: int, seed: int):
        if not isinstance(game, games.Game):
            raise TypeError(f"a GameTable plays a sorry_env.games.Game, got {game!r}")
        self.game = game
        self.specs = list(agent_specs)
        self.agents = [as_game_agent(game, spec) for spec in self.specs]
        self.labels = agent_labels(self.specs)
        self.seats = game_seats(game, len(self.agents))
        for agent in self.agents:  # an agent of another game, or a policy for another player count: refused now
            check_plays(agent, game, len(self.agents))
        self.max_turns = max_turns
        self.seed = seed

    def play(self, game_index: int) -> dict[str, Any]:
        """One game; returns its record in the form of :meth:`sorry_env.agents.arena.play.Table.play`."""
        game = self.game
        entry_seats, entry_at_seat, first_seat, engine_seed, view_rng = start_game(
            self.agents, self.seats, self.seed, game_index
        )
        state = game.new_state(len(self.agents), seed=engine_seed, first=first_seat)
        while game.winner(state) is None and game.turn(state) < self.max_turns:
            legal = game.legal_actions(state)
            turn = GameTurn.from_state(game, state, view_rng, legal)
            entry = entry_at_seat[turn.seat]
            action = checked_action(
                self.agents[entry].act(turn), legal, f"agent {self.labels[entry]!r}", f"in game {game_index}"
            )
            state = game.apply(state, action)
        winner_seat = game.winner(state)
        return {
            "game": game_index,
            "seats": list(entry_seats),
            "first_seat": first_seat,
            "winners": [] if winner_seat is None else [entry_seats.index(winner_seat)],
            "scores": None,
            "turns": game.turn(state),
        }
