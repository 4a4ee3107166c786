"""TD(lambda) self-play on afterstate values (training/td_afterstate.py) as a sorry-bench
baseline: from random weights, every seat played by the one network, no opponent but itself.

The budget counts the moves with a choice that the network played, every seat's (self-play
learns from both sides of each game), as the task's learner steps.
"""

from __future__ import annotations

from pathlib import Path

from sorry_env.training.config import TD_LAMBDA, TD_LAMBDA_DEFAULTS

from .tasks import Task

# Fixed settings of this baseline: the trainer's defaults (training/config.py's TD_LAMBDA_DEFAULTS).
SETTINGS = {
    key: TD_LAMBDA_DEFAULTS[key]
    for key in ("hidden", "lam", "lr", "epsilon", "games", "update_samples", "batch_size", "epochs")
}


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int) -> str:
    import argparse

    from sorry_env.training import td_afterstate as td

    out = run_dir / "policy.safetensors"
    given = {"players": task.players, "rules": task.rules, "decisions": budget, "seed": seed}
    cfg = TD_LAMBDA.load(None, {**SETTINGS, **given, "eval_every": curve_every, "out": str(out)})
    td.train(argparse.Namespace(**cfg), curve.win_rates)
    return str(out)
