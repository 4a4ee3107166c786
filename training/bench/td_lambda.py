"""TD(lambda) self-play on afterstate values (training/td_afterstate.py) as a sorry-bench
baseline: from random weights, every seat played by the one network, no opponent but itself.

The budget counts the moves with a choice that the network played, every seat's (self-play
learns from both sides of each game), as the task's learner steps.
"""

from __future__ import annotations

from pathlib import Path

from .tasks import SELF_PLAY, Task

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


def self_play_only(task: Task) -> str | None:
    """Why the learner cannot train on `task` beyond the game (algorithms.py checks that), or None."""
    if task.learner != SELF_PLAY:
        return "it learns by self-play only (every seat plays the network): use a self-play task"
    return None


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int) -> str:
    from sorry_env.training import td_afterstate as td

    out = run_dir / "policy.safetensors"
    s = SETTINGS
    args = td.parse_args(
        ["--players", str(task.players), "--rules", task.rules, "--decisions", str(budget), "--seed", str(seed)]
        + ["--hidden", ",".join(map(str, s["hidden"])), "--lam", str(s["lam"]), "--lr", str(s["lr"])]
        + ["--epsilon", str(s["epsilon"]), "--games", str(s["games"]), "--update-samples", str(s["update_samples"])]
        + ["--batch-size", str(s["batch_size"]), "--epochs", str(s["epochs"]), "--eval-every", str(curve_every)]
        + ["--out", str(out)]
    )

    def evaluate(decisions: int, path: Path) -> dict:
        row = curve.evaluate(decisions, str(path))
        return {task.eval_opponents[0]: row["win_rate"]}

    td.train(args, evaluate)
    return str(out)
