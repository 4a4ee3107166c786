"""Tournaments between agents: :func:`run_tournament` for the board game, and the runner
of each other registered game (:data:`GAME_TOURNAMENTS`)."""

from __future__ import annotations

import importlib
import os

from sorry_env import game, games
from sorry_env.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, Rules

from .pool import play_games
from .stats import summarize


def run_tournament(
    agent_specs: list,
    players: int | None = None,
    games: int = 1000,
    seed: int = 0,
    rules: Rules | str = DEFAULT_PRESET,
    workers: int | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    progress: bool = False,
    torch_threads: int | None = None,
) -> dict:
    """Play `games` games between `agent_specs` (one per player: a spec, an agents.Agent or a
    function from the observation dict to an action) and return the results dict:
    ``config``, ``agents`` (win rate, Wilson interval, rating, mean score per lineup entry),
    ``turn_order`` (win rate by position in turn order), ``first_mover_advantage``,
    ``mean_turns``, ``truncated`` and the per-game ``games`` records. `workers` defaults to
    the number of cores; agent objects must pickle to reach them. `torch_threads`: torch
    threads in each playing process (default: SORRY_TORCH_THREADS, else 1)."""
    agent_specs = list(agent_specs)
    players = len(agent_specs) if players is None else players
    if players not in game.DEFAULT_SEATS:
        raise ValueError(f"players must be 2, 3 or 4, got {players!r}")
    if len(agent_specs) != players:
        raise ValueError(
            f"{len(agent_specs)} agents listed for {players} players; list one agent per "
            f"player, e.g. heuristic {' '.join(['random'] * (players - 1))}"
        )
    game.seats_for(players, rules=rules)
    pool_size = (os.cpu_count() or 1) if workers is None else workers
    for name, value in (("games", games), ("max_turns", max_turns), ("workers", pool_size)):
        if value < 1:
            raise ValueError(f"{name} must be at least 1, got {value}")
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got {seed}")
    pool_size = min(pool_size, games)
    records = play_games(agent_specs, games, seed, rules, max_turns, pool_size, progress, torch_threads=torch_threads)
    return summarize(records, agent_specs, seed, rules, max_turns)


# The tournament runner of each registered game other than the board game (run_tournament):
# "module:function", called as function(agent_specs, players, games, seed, workers, max_turns,
# progress=, torch_threads=); it returns the results dict of run_tournament.
GAME_TOURNAMENTS = {"express": "sorry_env.training.express_evaluate:run_express_tournament"}


def _game_type_of(config: dict) -> games.GameType:
    """The game a results config is of: its "rules" is a registered game's id, or a board-game preset."""
    rules = config["rules"]
    return games.game_type(rules if rules in GAME_TOURNAMENTS else "sorry")


def game_tournament(game_id: str):
    """The tournament runner of a registered game other than the board game (GAME_TOURNAMENTS)."""
    module_name, _, name = GAME_TOURNAMENTS[game_id].partition(":")
    return getattr(importlib.import_module(module_name), name)
