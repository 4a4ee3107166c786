"""The PPO of the registered games other than the board game
(:mod:`sorry_env.training.game_ppo`) as a sorry-bench baseline, from scratch.

Opponents: the task's fixed opponents (one kind per name, drawn with equal chances), or in a
self-play task the current policy (``self``). It trains for the task's budget in learner
decisions and is evaluated with the task's evaluation (:class:`sorry_env.training.bench.algorithms.Curve`)
every ``curve_every`` learner steps and at the end, on the policy in memory (the trainer's
evaluation hook); the final policy file is written in the run directory.
"""

from __future__ import annotations

from pathlib import Path

from sorry_env.training.config import GAME_PPO, GAME_PPO_DEFAULTS, SELF

from .tasks import Task

# Fixed settings of this baseline: game_ppo's defaults (those of the shipped policies), the
# opponents aside (the task's).
SETTINGS = {key: GAME_PPO_DEFAULTS[key] for key in ("games", "hidden", "lr", "epochs", "minibatch", "clip", "entropy")}


def settings_for(task: Task, seed: int = 0, budget: int | None = None) -> dict:
    """game_ppo's validated config for `task`: SETTINGS with the task's opponents (self-play:
    the policy), learner-step budget and seed (no wall-clock limit)."""
    kinds = list(task.opponent_mix(SELF))
    task_settings = {"game": task.game_id, "players": task.players, "seed": seed, "minutes": 10.0**9}
    task_settings.update(steps=budget, opponents=kinds, mix=[1.0] * len(kinds))
    return GAME_PPO.load(None, {**SETTINGS, **task_settings})


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int) -> str:
    from sorry_env.training import game_ppo

    cfg = settings_for(task, seed, budget)
    actor, training = game_ppo.train(cfg, curve.evaluate, curve_every, log=None)
    policy = run_dir / "policy.safetensors"
    game_ppo.save(policy, cfg, actor, training)
    return str(policy)
