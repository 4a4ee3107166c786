"""Tournaments of Sorry! Express agents (``sorry-eval --game express ...``).

The games are played here; the worker pool, the statistics (win rates with 95% Wilson
intervals, turn order, openskill ratings) and the outputs are those of
:mod:`sorry_env.agents.arena`, so the results dict, the table and the files have the same form
(``config.rules`` reads ``"express"``).

Fair seating as there, over seats ``0 .. n-1``: game ``g`` puts lineup entry ``i`` in seat
``(i + g) % n`` and lets seat ``(g // n) % n`` move first. Everything random in game ``g``
(the dice, every agent's reset seed, the re-drawn generator of the agents' views) comes
from ``numpy.random.SeedSequence([seed, g])``. A game still running after ``max_turns``
turns (rolls) is a draw.

    sorry-eval --game express greedy random --games 2000 --seed 0
    python -c "from sorry_env.training.express_evaluate import run_express_tournament as r; \
               print(r(['greedy', 'random'], workers=1))"
"""

import os

import numpy as np

from sorry_env.agents.arena.play import start_game
from sorry_env.agents.arena.pool import play_games
from sorry_env.agents.arena.stats import summarize
from sorry_env.agents.express import ExpressTurn, make_express_agent
from sorry_env.express import engine as E
from sorry_env.express import game


class ExpressTable:
    """A lineup's Express agents in one process, able to play any game by index (the
    interface of agents.arena.play.Table; `rules` must be None)."""

    def __init__(self, agent_specs, rules, max_turns, seed):
        if rules is not None:
            raise ValueError("Sorry! Express has no rule presets; rules must be None")
        self.specs = list(agent_specs)
        self.agents = [make_express_agent(spec) for spec in self.specs]
        for agent in self.agents:  # a policy file for another player count is refused before any game
            agent.check_game("express", len(self.agents))
        self.seats = tuple(range(len(self.agents)))
        self.max_turns = max_turns
        self.seed = seed

    def play(self, game_index):
        """One game; returns its record in the form of agents.arena.play.Table.play."""
        entry_seats, entry_at_seat, first_seat, engine_seed, view_rng = start_game(
            self.agents, self.seats, self.seed, game_index
        )
        state = game.new_state(len(self.agents), seed=engine_seed, first=first_seat)
        while game.winner(state) is None and game.turn(state) < self.max_turns:
            legal = game.legal_actions(state)
            turn = ExpressTurn.from_state(state, view_rng, legal)
            entry = entry_at_seat[turn.seat]
            action = self.agents[entry].act(turn)
            if action not in legal:
                raise ValueError(
                    f"agent {self.specs[entry]!r} chose illegal action {action!r} in game "
                    f"{game_index}; legal: {legal.tolist()}"
                )
            E.step(state, int(action))
        winner_seat = game.winner(state)
        return {
            "game": game_index,
            "seats": list(entry_seats),
            "first_seat": first_seat,
            "winners": [] if winner_seat is None else [entry_seats.index(winner_seat)],
            "scores": None,
            "turns": game.turn(state),
        }


def run_express_tournament(
    agent_specs, players=None, games=1000, seed=0, workers=None, max_turns=None, progress=False, torch_threads=None
) -> dict:
    """Play `games` Sorry! Express games between `agent_specs` (one per player: specs of
    agents.express.make_express_agent, e.g. "expectimax:depth=1" or an Express policy
    file) and return the results dict of
    agents.arena.tournament.run_tournament. `max_turns` defaults to the env's limit; `workers`
    to the number of cores (more than one: call under ``if __name__ == "__main__":``)."""
    agent_specs = list(agent_specs)
    players = len(agent_specs) if players is None else players
    game.check_players(players)
    if len(agent_specs) != players:
        raise ValueError(
            f"{len(agent_specs)} agents listed for {players} players; list one agent per "
            f"player, e.g. greedy {' '.join(['random'] * (players - 1))}"
        )
    for spec in agent_specs:  # a bad spec is refused before any worker starts
        make_express_agent(spec).check_game("express", players)
    max_turns = game.DEFAULT_MAX_TURNS if max_turns is None else max_turns
    workers = os.cpu_count() if workers is None else workers
    for name, value in (("games", games), ("max_turns", max_turns), ("workers", workers)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    game.check_seed(seed)
    records = play_games(
        agent_specs,
        games,
        seed,
        None,
        max_turns,
        min(workers, games),
        progress,
        table_class=ExpressTable,
        torch_threads=torch_threads,
    )
    return summarize(records, agent_specs, seed, None, max_turns, seats=range(players), rules_name="express")
