"""Tournaments between agents of any registered game: :func:`run_tournament`, one runner for
every game (the table it plays at: :class:`sorry_env.agents.arena.play.Table`)."""

from __future__ import annotations

import os

from sorry_env import games as registry
from sorry_env.board.game import check_seed
from sorry_env.board.rules import DEFAULT_PRESET, Rules
from sorry_env.checks import is_integer

from ..catalog import policy_game
from .play import game_seats
from .pool import play_games
from .stats import summarize


def run_tournament(
    agent_specs: list,
    players: int | None = None,
    games: int = 1000,
    seed: int = 0,
    rules: Rules | str | registry.Game | None = None,
    workers: int | None = None,
    max_turns: int | None = None,
    progress: bool = False,
    torch_threads: int | None = None,
    game: str | None = None,
) -> dict:
    """Play `games` games between `agent_specs` (one per player: a spec of the game's agents,
    an agents.Agent or a function from the observation dict to an action) and return the
    results dict: ``config``, ``agents`` (win rate, Wilson interval, rating, mean score per
    lineup entry), ``turn_order`` (win rate by position in turn order),
    ``first_mover_advantage``, ``mean_turns``, ``truncated`` and the per-game ``games``
    records. The game: `rules`, a :class:`sorry_env.games.Game` or the board game's rules (a
    preset name or Rules; default its default preset), or `game`, a registered game's id with
    `rules` its variant (default: its first); the
    results' ``config.rules`` is the rules' name, or the game's id for a game played at the
    table over the registry's API. `max_turns` defaults to the game's ``GameType.max_turns``.
    `workers` defaults to the number of cores; agent objects must pickle to reach them.
    `torch_threads`: torch threads in each playing process (default: SORRY_TORCH_THREADS,
    else 1)."""
    if game is not None:
        played = registry.load_game(game, rules)  # rules None: the game's default variant
    else:
        played = policy_game(DEFAULT_PRESET if rules is None else rules)
    kind = played.game_type
    agent_specs = list(agent_specs)
    players = len(agent_specs) if players is None else players
    kind.check_players(players)
    if len(agent_specs) != players:
        raise ValueError(
            f"{len(agent_specs)} agents listed for {players} players; list one agent per "
            f"player, e.g. heuristic {' '.join(['random'] * (players - 1))}"
        )
    max_turns = kind.max_turns if max_turns is None else max_turns
    seats = game_seats(played, players)
    pool_size = (os.cpu_count() or 1) if workers is None else workers
    for name, value in (("games", games), ("max_turns", max_turns), ("workers", pool_size)):
        if not is_integer(value) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    check_seed(seed)
    records = play_games(agent_specs, games, seed, played, max_turns, min(pool_size, games), progress, torch_threads)
    # a game of rule presets keeps its rules' name in the results; another game its id
    variant = played.variant if kind.batched_step else None
    return summarize(records, agent_specs, seed, variant, max_turns, seats=seats, rules_name=kind.id)


def _game_type_of(config: dict) -> registry.GameType:
    """The game a results config is of: its "rules" is a registered game's id, or a board-game preset."""
    rules = config["rules"]
    registered = registry.registered_games()
    return registered[rules].game_type if rules in registered else policy_game(DEFAULT_PRESET).game_type
