"""TD(lambda) self-play on afterstate values (training/td_afterstate.py) as a sorry-bench
baseline: from random weights, every seat played by the one network, no opponent but itself.

The budget counts the moves with a choice that the network played, every seat's (self-play
learns from both sides of each game), as the task's learner steps.
"""

from __future__ import annotations

from pathlib import Path

from .tasks import Task

SETTINGS = {
    "hidden": [256, 256],
    "lam": 0.7,
    "lr": 3.0e-4,
    "epsilon": 0.02,  # share of moves played uniformly at random
    "games": 256,  # games played side by side
    "update_samples": 16_384,  # finished-game moves per update
    "batch_size": 512,
    "epochs": 2,
}


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int) -> str:
    import argparse

    from sorry_env.training import td_afterstate as td
    from sorry_env.training.config import TD_LAMBDA

    out = run_dir / "policy.safetensors"
    given = {"players": task.players, "rules": task.rules, "decisions": budget, "seed": seed}
    cfg = TD_LAMBDA.load(None, {**SETTINGS, **given, "eval_every": curve_every, "out": str(out)})

    def evaluate(decisions: int, agent) -> dict:  # the trainer's hook: the task's evaluation, in memory
        return {task.eval_opponents[0]: curve.evaluate(decisions, agent)["win_rate"]}

    td.train(argparse.Namespace(**cfg), evaluate)
    return str(out)
