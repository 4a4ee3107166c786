"""Self-play training of a Sorry! policy with sb3-contrib's MaskablePPO.

    sorry-train configs/2p.yaml            # new run in runs/<name>/
    sorry-train configs/2p.yaml --resume   # continue runs/<name>/ from its last checkpoint

A run directory holds:

- ``checkpoint.safetensors``: the MaskablePPO model's weights, optimizer state, step count
  and generator states (data only, no pickle: :mod:`sorry_env.training.checkpoint`), written every
  ``checkpoint_every`` steps and at the end; ``run_state.json``: config, snapshot pool and
  evaluation history at the same moment. ``--resume`` continues from the pair, so an
  interruption loses at most one checkpoint interval.
- ``pool/``: learner snapshots (policy files) that serve as opponents.
- ``policy.safetensors``: the latest exported policy, written at each evaluation and at the
  end (it is the result; evaluations play the policy in memory, through the evaluation hook).
- ``tb/``: TensorBoard logs (losses, ``speed/*`` steps per second, ``eval/win_rate_vs_*``).
- ``learning_curve.png``: evaluation win rates over steps.

Everything on the schedule (snapshots, evaluations, checkpoints) happens at rollout
boundaries, where the weights and the step count belong together.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import yaml
from sb3_contrib import MaskablePPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv
from tqdm import tqdm

from sorry_env.agents.base import Agent

from . import checkpoint as run_checkpoint
from . import td_afterstate
from .batched_env import BatchedSelfPlayEnv
from .config import config_path, load_config, read_yaml, validate
from .curve import plot_learning_curve
from .export import MAX_RUN_STATE_BYTES, export_model, policy_agent
from .imitation import pretrain
from .learner_env import make_env
from .match import win_rates, with_interval
from .opponents import OpponentPool
from .sb3_policy import SelfPlayPolicy
from .search_teacher import warm_start as distil_search


class Run(run_checkpoint.RunDirectory):
    """A run directory: config, opponent pool, evaluation history, checkpoints."""

    def __init__(self, cfg: dict, run_dir: Path, evaluate: Callable[[int, Agent], dict] | None = None):
        super().__init__(cfg, run_dir, "run_state.json")
        # The evaluation hook: (learner steps, the current policy in memory) -> {opponent: win
        # rate}. Without one, the config's evaluation opponents are played and the policy file
        # is exported at each evaluation (a long run's latest result); with one, only at the end.
        self.evaluate_policy = evaluate or self.win_rates
        self.export_each_evaluation = evaluate is None
        opp = cfg["opponents"]
        self.pool = OpponentPool(opp["mix"], opp["snapshot_sample"], opp["snapshot_window"], seed=cfg["seed"])
        self.evaluations: list[dict] = []
        self.agent: Agent | None = None  # the evaluation hook's agent (export.policy_agent), made once
        self.imitation: dict = {}  # warm-start statistics, if the config asks for one
        self.wall_before = 0.0  # wall seconds of earlier sessions of this run (up to their checkpoints)
        self.session_start = time.perf_counter()
        self.last = {"snapshot": -1, "evaluation": -1, "checkpoint": -1}  # steps at the last of each

    @property
    def checkpoint_path(self) -> Path:
        return self.dir / run_checkpoint.FILE

    def load_state(self) -> None:
        def take(state: dict) -> None:
            for path in state["snapshots"]:
                self.pool.add_snapshot(self.snapshot_file(path))
            self.evaluations = list(state["evaluations"])
            self.imitation = dict(state["imitation"])
            self.wall_before = float(state.get("wall_seconds", 0.0))
            self.last = {key: int(state["last"][key]) for key in self.last}

        # The budget may grow on resume, and the rollout path may change (both play the same
        # games' distribution; runs from before the rollout key used per_game); runs from
        # before sorry-expit had a config of its own stored its section too.
        self.read_state(("budget", "rollout", "expert_iteration"), MAX_RUN_STATE_BYTES, take)

    def add_snapshot(self, model: MaskablePPO) -> None:
        self.pool_dir.mkdir(parents=True, exist_ok=True)
        path = self.pool_dir / f"snapshot_{model.num_timesteps:010d}.safetensors"
        export_model(model, path, self.cfg, model.num_timesteps)
        self.pool.add_snapshot(path)
        self.last["snapshot"] = model.num_timesteps

    def win_rates(self, steps: int, agent: Agent) -> dict:
        """The default evaluation hook: `agent`'s win rate against each evaluation opponent."""
        ev, game = self.cfg["evaluation"], self.cfg["game"]
        return win_rates(agent, ev["opponents"], game["num_players"], game["rules"], ev["games"],
                         self.cfg["seed"] + 1_000_000, game["max_turns"])  # fmt: skip

    def evaluate(self, model: MaskablePPO) -> dict:
        """Measure the current policy, in memory, with the evaluation hook."""
        steps = int(model.num_timesteps)
        if self.agent is None:
            self.export(model)
            self.agent = policy_agent(model.policy.mlp_extractor.actor, self.policy_path)
        rates = self.evaluate_policy(steps, self.agent)
        result = {"timesteps": steps, "games": self.cfg["evaluation"]["games"], "win_rates": rates}
        self.evaluations.append(result)
        self.last["evaluation"] = steps
        if self.export_each_evaluation:
            self.export(model)
        return result

    def export(self, model: MaskablePPO) -> None:
        """The run's result: policy.safetensors with the latest evaluation in its metadata."""
        latest = {"latest": self.evaluations[-1] if self.evaluations else None}
        export_model(model, self.policy_path, self.cfg, model.num_timesteps, latest)

    def checkpoint(self, model: MaskablePPO) -> None:
        """Model and run state, each replaced atomically, the state last: a crash between
        the two leaves a model at most one interval newer than the state, which resumes."""
        run_checkpoint.save(model, self.checkpoint_path)
        self.last["checkpoint"] = model.num_timesteps
        state = {
            "config": self.cfg,
            "timesteps": int(model.num_timesteps),
            "snapshots": [str(Path(p).relative_to(self.dir)) for p in self.pool.snapshot_paths],
            "evaluations": self.evaluations,
            "imitation": self.imitation,
            "last": self.last,
            "wall_seconds": self.wall_seconds(),
        }
        self.write_state(state)

    def wall_seconds(self) -> float:
        return self.wall_before + time.perf_counter() - self.session_start

    def due(self, what: str, every: int, timesteps: int) -> bool:
        return timesteps - self.last[what] >= every or self.last[what] < 0


class SelfPlayCallback(BaseCallback):
    """Runs the schedule at each rollout start; logs speed; drives the progress bar."""

    def __init__(self, run: Run, total: int):
        super().__init__()
        self.run = run
        self.total = total
        self.bar = None
        self.rollout_speeds: list[float] = []

    def _on_training_start(self):
        self.bar = tqdm(
            total=self.total,
            initial=self.model.num_timesteps,
            unit="step",
            smoothing=0.1,
            mininterval=2,
            dynamic_ncols=True,
        )
        self.start_time, self.start_steps = time.perf_counter(), self.model.num_timesteps

    def _on_rollout_start(self):
        cfg, t = self.run.cfg, self.model.num_timesteps
        if "snapshots" in cfg["opponents"]["mix"] and self.run.due("snapshot", cfg["opponents"]["snapshot_every"], t):
            self.run.add_snapshot(self.model)
        if self.run.due("evaluation", cfg["evaluation"]["every"], t):
            self.log_evaluation(self.run.evaluate(self.model))
        if self.run.due("checkpoint", cfg["checkpoint_every"], t):
            self.run.checkpoint(self.model)
        self.rollout_start = time.perf_counter()

    def _on_rollout_end(self):
        steps = self.model.n_steps * self.model.n_envs
        speed = steps / (time.perf_counter() - self.rollout_start)
        self.rollout_speeds.append(speed)
        overall = (self.model.num_timesteps - self.start_steps) / (time.perf_counter() - self.start_time)
        self.logger.record("speed/rollout_steps_per_s", speed)
        self.logger.record("speed/steps_per_s", overall)  # with updates and evaluations
        self.logger.record("pool/snapshots", len(self.run.pool.snapshot_paths))
        self.bar.set_postfix(rollout_sps=f"{speed:.0f}", sps=f"{overall:.0f}")

    def _on_step(self):
        self.bar.update(self.model.n_envs)
        return True

    def _on_training_end(self):
        self.bar.close()
        t = self.model.num_timesteps
        if self.run.last["evaluation"] != t:
            self.log_evaluation(self.run.evaluate(self.model))
            self.logger.dump(t)

    def log_evaluation(self, result: dict) -> None:
        for name, rate in result["win_rates"].items():
            self.logger.record(f"eval/win_rate_vs_{name}", rate)
        rates = ", ".join(f"vs {n} {with_interval(r, result['games'])}" for n, r in result["win_rates"].items())
        elapsed = format_duration(self.run.wall_seconds())
        tqdm.write(f"step {result['timesteps']} ({elapsed}): win rate {rates} ({result['games']} games each)")


def evaluation_table(evaluations: list[dict]) -> str:
    """The run's in-training evaluations as a text table: one row per check, one column per
    opponent, each win rate with its 95% Wilson interval (the learning curve in numbers)."""
    if not evaluations:
        return "no evaluations"
    names = list(evaluations[0]["win_rates"])
    header = ["step"] + [f"vs {name}" for name in names]
    rows = []
    for result in evaluations:
        games = result["games"]
        cells = [str(result["timesteps"])]
        for name in names:
            rate = result["win_rates"].get(name)
            cells.append("-" if rate is None else with_interval(rate, games))
        rows.append(cells)
    widths = [max(len(row[k]) for row in [header, *rows]) for k in range(len(header))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(row, widths)) for row in [header, *rows]]
    return f"in-training evaluations ({evaluations[-1]['games']} games each):\n" + "\n".join(lines)


def format_duration(seconds: float) -> str:
    """Wall time as people read it: "48 s", "3 min 05 s"."""
    minutes, secs = divmod(int(round(seconds)), 60)
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def make_envs(cfg: dict, pool: OpponentPool, seed: int) -> VecEnv:
    """The rollout env of `cfg`: ``envs`` games, batched (config ``rollout: batched``, the
    default: :class:`sorry_env.training.batched_env.BatchedSelfPlayEnv`) or one Gymnasium env each
    (``rollout: per_game``)."""
    venv: VecEnv
    if cfg["rollout"] == "batched":
        venv = BatchedSelfPlayEnv(cfg, pool)
    else:

        def make():
            return Monitor(make_env(cfg, pool.sample))

        venv = DummyVecEnv([make for _ in range(cfg["envs"])])
    venv.seed(seed)
    return venv


def learning_rate(ppo: dict):
    """MaskablePPO's learning rate: constant, or falling linearly from ``learning_rate`` to
    ``learning_rate_final`` over the budget (sb3's progress counts the run's steps, a resumed
    run's included, so a resumed run continues the same schedule)."""
    start, final = ppo["learning_rate"], ppo["learning_rate_final"]
    if final is None:
        return start
    return lambda progress_remaining: final + (start - final) * progress_remaining


def make_model(cfg: dict, venv: VecEnv, tb_dir: str | Path | None) -> MaskablePPO:
    """The MaskablePPO of a run: :class:`SelfPlayPolicy` (the ``network`` section's actor over
    the ``game`` section's rules: a preset, or any registered game) on `venv`, with the ``ppo``
    section's settings and TensorBoard logs in `tb_dir` (None: none). Every PPO trainer here
    builds its model with it (sorry-train's runs, :mod:`sorry_env.training.game_ppo`)."""
    net = cfg["network"]
    policy_kwargs = {
        "kind": net["kind"],
        "hidden": list(net["hidden"]),
        "value_hidden": list(net["value_hidden"]),
        "activation": net["activation"],
        "rules": cfg["game"]["rules"],
    }
    return MaskablePPO(
        SelfPlayPolicy,
        venv,
        policy_kwargs=policy_kwargs,
        seed=cfg["seed"],
        device="cpu",
        tensorboard_log=None if tb_dir is None else str(tb_dir),
        verbose=0,
        **{
            **{key: value for key, value in cfg["ppo"].items() if key != "learning_rate_final"},
            "learning_rate": learning_rate(cfg["ppo"]),
        },
    )


def open_run(cfg: dict, runs_dir: str | Path = "runs", resume: bool = False) -> Run:
    """The run directory for `cfg` after every check that can fail before training starts:
    the config's values, and a run to resume (or none to overwrite)."""
    validate(cfg, warm_start=not resume)
    run = Run(cfg, Path(runs_dir) / cfg["name"])
    if resume:
        if run_checkpoint.find(run.dir) is None:
            raise FileNotFoundError(f"--resume: no checkpoint in {run.dir}")
        run.load_state()
    elif run.state_path.exists():
        raise FileExistsError(
            f"{run.dir} already holds a run: pass --resume to continue it, or change the config's name"
        )
    run.dir.mkdir(parents=True, exist_ok=True)
    return run


def train(cfg: dict, runs_dir: str | Path = "runs", resume: bool = False) -> Run:
    return run_training(open_run(cfg, runs_dir, resume), resume)


def run_training(run: Run, resume: bool) -> Run:
    cfg = run.cfg
    torch.set_num_threads(cfg["torch_threads"])
    # A resumed run draws fresh games (seeded by the step count), not a replay of the first ones.
    start = run.last["checkpoint"] if resume else 0
    venv = make_envs(cfg, run.pool, seed=cfg["seed"] + max(start, 0))
    model = make_model(cfg, venv, run.dir / "tb")
    venv.seed(cfg["seed"] + max(start, 0))  # MaskablePPO(seed=...) seeded the env with the config's seed
    if resume:
        run_checkpoint.restore(model, run.checkpoint_path)
    else:
        if cfg["imitation"]["samples"] > 0:
            run.imitation = pretrain(model, cfg)
        if cfg["distillation"]["decisions"] > 0:
            run.imitation["distillation"] = distil_search(model, cfg, run.dir)
    if "snapshots" in cfg["opponents"]["mix"] and not run.pool.snapshot_paths:
        # The first games start before the first rollout's schedule runs: the network as it is
        # now is the first snapshot, so a mix of snapshots alone (pure self-play) has an opponent.
        run.add_snapshot(model)
    remaining = cfg["budget"]["timesteps"] - model.num_timesteps
    callback = SelfPlayCallback(run, cfg["budget"]["timesteps"])
    if remaining > 0:
        model.learn(remaining, callback=callback, tb_log_name="ppo", reset_num_timesteps=not resume)
    run.checkpoint(model)
    if not run.export_each_evaluation or not run.policy_path.exists():
        run.export(model)
    plot_learning_curve(
        run.evaluations,
        cfg["game"]["num_players"],
        run.dir / "learning_curve.png",
        f"{cfg['name']}: {cfg['game']['num_players']} players, {cfg['game']['rules']}",
    )
    print(evaluation_table(run.evaluations))
    speeds = callback.rollout_speeds
    print(
        f"{cfg['name']}: {model.num_timesteps} steps in {run.wall_seconds():.0f} s of wall time"
        + (f", rollout steps/s median {np.median(speeds):.0f}" if speeds else "")
        + f"; policy: {run.policy_path}; curve: {run.dir / 'learning_curve.png'}"
    )
    return run


def td_config(path) -> bool:
    """Whether config `path` is one for the TD(lambda) learner (``algorithm: td_lambda``,
    training/td_afterstate.py); an unreadable file is left to the PPO config's own checks."""
    try:
        data = read_yaml(config_path(path))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("algorithm") == "td_lambda"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description="Self-play training of a Sorry! policy: MaskablePPO, or TD(lambda) for a config "
        "with algorithm: td_lambda."
    )
    p.add_argument("config", help="YAML config (see configs/ and training/config.py)")
    p.add_argument("--resume", action="store_true", help="continue the run from its last checkpoint")
    p.add_argument("--runs-dir", default="runs", help="parent directory of run directories")
    p.add_argument("--timesteps", type=int, help="override budget.timesteps")
    args = p.parse_args(argv)
    if td_config(args.config):  # a config that names the TD(lambda) learner: its own settings
        if args.resume:
            p.error("--resume: a td_lambda run is not resumable; start it again under another name")
        timesteps = [] if args.timesteps is None else ["--decisions", str(args.timesteps)]
        return td_afterstate.main(["--config", str(args.config), "--runs-dir", args.runs_dir, *timesteps])
    try:  # mistakes in the command or the config: a message, not a traceback
        cfg = load_config(args.config)
        if args.timesteps is not None:
            cfg["budget"]["timesteps"] = args.timesteps
        run = open_run(cfg, args.runs_dir, args.resume)
    except (OSError, ValueError, yaml.YAMLError) as e:
        p.error(str(e))
    run_training(run, args.resume)


if __name__ == "__main__":
    main()
