"""The native trainer (training/train.py) as a sorry-bench baseline: MaskablePPO with the
afterstate actor on batched rollouts, from scratch (no imitation, no distillation).

Opponents: the task's fixed opponents (``mix: {heuristic: 1}``), or in a self-play task the
learner's own snapshots only (``mix: {snapshots: 1}``), starting with a snapshot of the
initial network so that the first games have an opponent. The trainer's evaluation hook is
the task's evaluation (:class:`sorry_env.training.bench.algorithms.Curve`), played by the
policy in memory; the policy file is written once, at the end.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .tasks import SELF_PLAY, Task

# Fixed settings of this baseline (over training.config.DEFAULTS): the shipped configs'
# rollout shape (128 games x 64 steps) with PPO's common defaults; no warm start.
SETTINGS: dict[str, Any] = {
    "network": {"kind": "afterstate", "hidden": [256, 256], "value_hidden": [256, 256], "activation": "relu"},
    "ppo": {
        "learning_rate": 3.0e-4,
        "n_steps": 64,
        "batch_size": 1024,
        "n_epochs": 4,
        "gamma": 0.995,
        "gae_lambda": 0.95,
        "clip_range": 0.2,
        "ent_coef": 0.01,
    },
    "envs": 128,
    "snapshot_every": 50_000,  # self-play: learner steps between snapshots joining the pool
}


def make_config(task: Task, seed: int, budget: int, curve_every: int, curve_games: int) -> dict:
    """The trainer's validated config for this task (SETTINGS over its defaults)."""
    from sorry_env.training.config import PPO

    given = {
        "name": "native-ppo",
        "seed": seed,
        "game.num_players": task.players,
        "game.rules": task.rules,
        "network": dict(SETTINGS["network"]),
        **{f"ppo.{key}": value for key, value in SETTINGS["ppo"].items()},
        "envs": SETTINGS["envs"],
        "opponents.mix": task.opponent_mix("snapshots"),
        "opponents.snapshot_every": SETTINGS["snapshot_every"],
        "budget.timesteps": budget,
        "evaluation.every": curve_every,
        "evaluation.games": curve_games,
        "evaluation.opponents": list(task.eval_opponents[:1]),
        "checkpoint_every": curve_every,
    }
    return PPO.load(None, given)


def train(task: Task, seed: int, budget: int, run_dir: Path, curve, curve_every: int):
    from sorry_env.training.train import Run, make_envs, make_model, run_training

    cfg = make_config(task, seed, budget, curve_every, curve.games)
    run = Run(cfg, run_dir / "trainer", curve.win_rates)
    run.dir.mkdir(parents=True, exist_ok=True)
    if task.learner == SELF_PLAY:
        # The first opponent is the initial network itself (MaskablePPO seeds torch with the
        # config's seed, so this model starts with the learner's weights).
        from sorry_env.training.opponents import OpponentPool

        first = make_model(cfg, make_envs(cfg, OpponentPool({"random": 1.0}), seed), run.dir / "tb")
        run.add_snapshot(first)
        del first
    run_training(run, resume=False)
    return str(run.policy_path)
