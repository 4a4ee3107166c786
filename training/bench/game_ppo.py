"""The plain-torch PPO of the registered games other than the board game
(:mod:`sorry_env.training.game_ppo`) as a sorry-bench baseline, from scratch.

Opponents: the task's fixed opponents (one kind per name, drawn with equal chances), or in a
self-play task the current policy (``self``). It trains for the task's budget in learner
decisions and is evaluated with the task's evaluation (:class:`sorry_env.training.bench.algorithms.Curve`)
every ``curve_every`` learner steps and at the end, from a policy file written in the run
directory.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from .tasks import SELF_PLAY, Task

# Fixed settings of this baseline: game_ppo's defaults (those of the shipped policies), the
# opponents aside (the task's).
SETTINGS = {
    "games": 256,
    "hidden": [128, 128],
    "lr": 1e-3,
    "epochs": 4,
    "minibatch": 512,
    "clip": 0.2,
    "entropy": 0.01,
}


def settings_for(task: Task):
    """game_ppo's Settings for `task`: SETTINGS with the task's opponents (self-play: the policy)."""
    from sorry_env.training.game_ppo import SELF, Settings

    kinds = (SELF,) if task.learner == SELF_PLAY else tuple(dict.fromkeys(task.opponents))
    values = {**SETTINGS, "hidden": tuple(SETTINGS["hidden"])}
    return dataclasses.replace(Settings(), **values, opponents=kinds, mix=(1.0,) * len(kinds))


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int, settings=None) -> str:
    from sorry_env.training import game_ppo

    settings = settings_for(task) if settings is None else settings
    policy = run_dir / "policy.safetensors"
    state = {"next": curve_every}

    def on_update(update: int, steps: int, actor) -> None:
        if steps >= state["next"] and steps < budget:
            game_ppo.save(policy, task.game_id, actor, task.players, settings, {"learner_steps": steps})
            curve.evaluate(steps, str(policy))
            while state["next"] <= steps:
                state["next"] += curve_every

    actor, training = game_ppo.train(
        task.game_id, task.players, settings, seed, steps=budget, on_update=on_update, log=None
    )
    game_ppo.save(policy, task.game_id, actor, task.players, settings, training)
    curve.evaluate(training["learner_steps"], str(policy))
    return str(policy)
