"""RLlib PPO (training/rllib_backend.py, new API stack) as a sorry-bench baseline, from scratch.

The backend trains in iterations of ``train_batch_size`` learner env steps and writes its
policy at checkpoints, about every ``curve_every`` steps here and at the end; its
evaluation hook plays the task's evaluation with that policy file after each. Opponents:
the task's fixed ones (``mix: {heuristic: 1}``), or in a self-play task the shared policy
in every seat (``mix: {self: 1}``: every seat learns, and the budget counts every learning
seat's steps, as the backend counts them).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .tasks import Task

SETTINGS: dict[str, Any] = {
    "network": {"hidden": [256, 256], "value_hidden": [256, 256], "activation": "relu"},
    "ppo": {"train_batch_size": 4000, "minibatch_size": 512, "num_epochs": 4, "lr": 3.0e-4, "gamma": 0.995},
    "env_runners": {"num_env_runners": 1, "num_envs_per_env_runner": 1, "rollout_fragment_length": 200},
}


def make_config(task: Task, seed: int, budget: int, curve_every: int) -> dict:
    """The backend's config for this task: a checkpoint (and an evaluation) about every
    `curve_every` steps."""
    from sorry_env.training.config import RLLIB

    batch = SETTINGS["ppo"]["train_batch_size"]
    given = {
        "name": "rllib-ppo",
        "seed": seed,
        "opponents.mix": task.opponent_mix("self"),
        "checkpoint_every": max(1, curve_every // batch),
    }
    given.update({"game.num_players": task.players, "game.rules": task.rules, "network": dict(SETTINGS["network"])})
    given.update({f"{section}.{key}": v for section in ("ppo", "env_runners") for key, v in SETTINGS[section].items()})
    return RLLIB.load(None, {**given, "budget.iterations": max(1, math.ceil(budget / batch))})


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    from sorry_env.training import rllib_backend as backend

    cfg = make_config(task, seed, budget, curve_every)
    run = backend.open_run(cfg, run_dir, resume=False)
    backend.train(cfg, run, log=lambda message: None, evaluate=curve.evaluate)  # the task's evaluation at checkpoints
    return str(run.policy_path)
