"""Scoring an agent on a task: the task's evaluation tournament, its win rate with the 95%
Wilson interval, and the normalized score (:func:`sorry_env.training.bench.tasks.normalized_score`)."""

from __future__ import annotations

import time

from .tasks import Task, normalized_score


def check_fits(agent, task: Task) -> None:
    """ValueError saying why `agent` (a spec or an agents.Agent) cannot play `task`'s game
    (rules, player count, a network made for another layout); nothing is played."""
    from sorry_env import agents, games

    game = games.load_game(task.game_id, task.rules)  # rules None: the game's default variant
    try:
        game.check_agent(agents.as_agent(agent, game=game), task.players)
    except (ValueError, TypeError) as error:
        what = f"{task.players} players, {task.rules}" if task.rules else game.game_type.long_name
        raise ValueError(f"{agent!r} cannot play task {task.name} ({what}): {error}") from None


def score(
    agent,
    task: Task,
    games: int | None = None,
    seed: int | None = None,
    workers: int = 1,
    progress: bool = False,
) -> dict:
    """The agent's row on `task`: wins, games, win_rate, ci_low, ci_high, normalized, seconds.
    `games` and `seed` default to the task's evaluation (the score); other values make an
    in-run evaluation or a quicker look, flagged ``standard: False``."""
    from sorry_env.agents.arena.tournament import run_tournament

    games = task.eval_games if games is None else games
    seed = task.eval_seed if seed is None else seed
    start = time.perf_counter()
    lineup = task.lineup(agent)
    results = run_tournament(
        lineup, task.players, games, seed, task.rules, workers, progress=progress, game=task.game_id
    )
    row = results["agents"][0]
    label = agent if isinstance(agent, str) else row["agent"]
    return {
        "task": task.id,
        "agent": label,
        **{key: row[key] for key in ("wins", "games", "win_rate", "ci_low", "ci_high")},
        "normalized": normalized_score(task, row["win_rate"]),
        "seed": seed,
        "standard": games == task.eval_games and seed == task.eval_seed,
        "seconds": round(time.perf_counter() - start, 1),
    }
