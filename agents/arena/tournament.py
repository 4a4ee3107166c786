"""Tournaments between agents: :func:`run_tournament` for the board game (its compiled table),
:func:`run_game_tournament` for every other registered game (over the registry's API)."""

from __future__ import annotations

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


def run_game_tournament(
    game: str | games.Game,
    agent_specs: list,
    players: int | None = None,
    games: int = 1000,
    seed: int = 0,
    workers: int | None = None,
    max_turns: int | None = None,
    progress: bool = False,
    torch_threads: int | None = None,
) -> dict:
    """:func:`run_tournament` for a registered game other than the board game (its id, or a
    :class:`sorry_env.games.Game`), played over the registry's API by
    :class:`~sorry_env.agents.arena.game_table.GameTable`: `agent_specs` are that game's specs
    (``sorry_env.agents.make_agent(spec, game=...)``), Agent objects or functions of the
    observation dict; `max_turns` defaults to the game's ``GameType.max_turns``. The results
    dict has the same form; its ``config.rules`` is the game's id."""
    from sorry_env.game import check_seed

    from ..any_game import as_game
    from .game_table import GameTable, game_seats

    game = as_game(game)
    kind = game.game_type
    if kind.id == "sorry":
        raise ValueError("the board game's tournaments are run_tournament (rules, seats, teams)")
    agent_specs = list(agent_specs)
    players = len(agent_specs) if players is None else players
    kind.check_players(players)
    if len(agent_specs) != players:
        raise ValueError(
            f"{len(agent_specs)} agents listed for {players} players; list one agent per "
            f"player, e.g. greedy {' '.join(['random'] * (players - 1))}"
        )
    max_turns = kind.max_turns if max_turns is None else max_turns
    pool_size = (os.cpu_count() or 1) if workers is None else workers
    for name, value in (("games", games), ("max_turns", max_turns), ("workers", pool_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    check_seed(seed)
    GameTable(agent_specs, game, max_turns, seed)  # a bad spec is refused before any worker starts
    records = play_games(
        agent_specs,
        games,
        seed,
        game,
        max_turns,
        min(pool_size, games),
        progress,
        table_class=GameTable,
        torch_threads=torch_threads,
    )
    seats = game_seats(game, players)
    return summarize(records, agent_specs, seed, None, max_turns, seats=seats, rules_name=kind.id)


def _game_type_of(config: dict) -> games.GameType:
    """The game a results config is of: its "rules" is a registered game's id, or a board-game preset."""
    rules = config["rules"]
    registered = games.registered_games()
    return registered[rules].game_type if rules in registered else games.game_type("sorry")
