"""RLlib PPO (training/rllib_backend.py, new API stack) as a sorry-bench baseline, from scratch.

The backend trains in iterations of ``train_batch_size`` learner env steps and writes its
policy at checkpoints; this adapter trains in segments of about ``curve_every`` steps
(each segment resumes the run from its checkpoint), evaluates the policy file after each
and at the end. Opponents: the task's fixed ones (``mix: {heuristic: 1}``), or in a
self-play task the shared policy in every seat (``mix: {self: 1}``: every seat learns, and
the budget counts every learning seat's steps, as the backend counts them).
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from .tasks import SELF_PLAY, Task

SETTINGS: dict[str, Any] = {
    "network": {"hidden": [256, 256], "value_hidden": [256, 256], "activation": "relu"},
    "ppo": {"train_batch_size": 4000, "minibatch_size": 512, "num_epochs": 4, "lr": 3.0e-4, "gamma": 0.995},
    "env_runners": {"num_env_runners": 1, "num_envs_per_env_runner": 1, "rollout_fragment_length": 200},
}


def make_config(task: Task, seed: int, budget: int, curve_every: int) -> tuple[dict, int]:
    """The backend's config for this task, and the iterations per segment."""
    from sorry_env.training.config import RLLIB

    mix = {"self": 1.0} if task.learner == SELF_PLAY else {name: 1.0 for name in set(task.opponents)}
    batch = SETTINGS["ppo"]["train_batch_size"]
    per_segment = max(1, curve_every // batch)
    given = {"name": "rllib-ppo", "seed": seed, "opponents.mix": mix, "checkpoint_every": per_segment}
    given.update({"game.num_players": task.players, "game.rules": task.rules, "network": dict(SETTINGS["network"])})
    given.update({f"{section}.{key}": v for section in ("ppo", "env_runners") for key, v in SETTINGS[section].items()})
    cfg = RLLIB.load(None, {**given, "budget.iterations": max(1, math.ceil(budget / batch))})
    return cfg, per_segment


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    from sorry_env.training import rllib_backend as backend

    cfg, per_segment = make_config(task, seed, budget, curve_every)
    total = cfg["budget"]["iterations"]
    done = 0
    while done < total:
        done = min(total, done + per_segment)
        segment = copy.deepcopy(cfg)
        segment["budget"]["iterations"] = done
        # The checkpoint resumed here is the one this process wrote in the previous segment,
        # into a run directory sorry-bench refuses to reuse: trusted by construction.
        run = backend.open_run(segment, run_dir, resume=done > per_segment, trust_run_dir=True)
        run = backend.train(segment, run, resume=done > per_segment, log=lambda message: None)
        curve.evaluate(run.state["env_steps"], str(run.policy_path))
    return str(run.policy_path)
