"""Overall learner steps/s of the MaskablePPO self-play trainer (rollouts + updates), by env path.

For each config and each env path: the trainer's model and env as ``sorry-train`` builds
them (training.train.make_envs / make_model), with no warm start and no evaluation, one
snapshot of the untrained model in the opponent pool (so the config's ``snapshots`` share is
played), one rollout + update of warm-up, then ``--rollouts`` rollouts + updates timed by
wall clock and by this process's CPU time (steadier on a shared machine). Reported: overall
learner steps/s (wall and per CPU second), and where the CPU time went:

- ``env``: inside the VecEnv's step/reset (the games, the opponents' moves, observations),
- ``opponents``: the part of ``env`` spent in opponent moves that Python drives (snapshot
  forwards of the batched path; every opponent move of the per-game ``gym`` path),
- ``rollout other``: the rest of the rollout (the learner's forward, sb3's buffer and masks),
- ``update``: PPO's n_epochs over the rollout.

Paths: ``gym`` (one SorryGymEnv per game in a DummyVecEnv, the per-game path),
``batched`` (training.batched_env, the default), and ``old:FILE`` (the self-play env deleted
in 92ae938, ``git show 92ae938^:training/selfplay_env.py > FILE``, for the regression check);
a path ending in ``+dense`` runs the policy's dense forward, sb3's masked distribution over all
actions in the update and an unfused Adam (the trainer before the sparse first layer and the
update's changes in training.sb3_policy), so ``gym+dense`` is the trainer as it was before the
batched env;
``@B`` after a path plays B games per step (n_steps scaled to keep the rollout size).
Paths run back to back in one process, so their ratio is what to compare on a shared machine.

    python benchmarks/bench_trainer.py [--configs configs/2p.yaml configs/4p.yaml]
        [--paths gym+dense batched] [--rollouts 3] [--envs N]
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from sorry_env.training import train as T
from sorry_env.training.config import load_config
from sorry_env.training.export import export_model
from sorry_env.training.opponents import OpponentPool


class Phases(BaseCallback):
    """Wall time of rollouts (the rest of learn() is the update)."""

    def __init__(self):
        super().__init__()
        self.rollout = 0.0

    def _on_rollout_start(self):
        self._start = time.process_time()

    def _on_rollout_end(self):
        self.rollout += time.process_time() - self._start

    def _on_step(self):
        return True


def timed(obj, name, counter, key):
    """Replace obj.name with a version that adds its wall time to counter[key]."""
    inner = getattr(obj, name)

    def wrapper(*args, **kwargs):
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            counter[key] += time.process_time() - start

    setattr(obj, name, wrapper)


def load_old_env(path: str):
    spec = importlib.util.spec_from_file_location("training._old_selfplay_env", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.SelfPlayEnv


def build(cfg: dict, path: str, pool: OpponentPool, counter: dict):
    """The VecEnv of `path`, with its step/reset (and opponent moves) timed (CPU seconds) into counter."""
    if path == "batched":
        from sorry_env.training.batched_env import BatchedSelfPlayEnv

        venv = BatchedSelfPlayEnv(cfg, pool, seed=cfg["seed"])
        timed(venv, "_external_moves", counter, "opponents")
    elif path == "gym":
        venv = DummyVecEnv([lambda: Monitor(T.make_env(cfg, pool.sample)) for _ in range(cfg["envs"])])
        venv.seed(cfg["seed"])
    elif path.startswith("old:"):
        env_class = load_old_env(path[4:])
        game = cfg["game"]
        venv = DummyVecEnv(
            [
                lambda: Monitor(env_class(pool, game["num_players"], game["rules"], game["max_turns"]))
                for _ in range(cfg["envs"])
            ]
        )
        venv.seed(cfg["seed"])
    else:
        raise ValueError(f"unknown path {path!r}")
    timed(venv, "step_wait", counter, "env")
    timed(venv, "reset", counter, "env")
    return venv


DENSE = "+dense"  # path suffix: the network's dense forward (the trainer before the sparse first layer)


def use_dense_forward(dense: bool) -> None:
    """Switch the trainer's policy between the sparse first layer (training.sb3_policy) and the
    plain dense modules (the actor's own forward: what the trainer ran before)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    from sorry_env.training import sb3_policy

    cls, policy = sb3_policy.ActorCritic, sb3_policy.SelfPlayPolicy
    if not hasattr(cls, "_sparse_methods"):
        cls._sparse_methods = (cls.forward_actor, cls.forward_critic)
        policy._own_evaluate_actions = policy.evaluate_actions
    if dense:
        cls.forward_actor = lambda self, features: self.actor(features)
        cls.forward_critic = lambda self, features: self.critic(features[:, : self.actor.obs_size])
        # and sb3's masked distribution over all actions in the update
        policy.evaluate_actions = MaskableActorCriticPolicy.evaluate_actions
    else:
        cls.forward_actor, cls.forward_critic = cls._sparse_methods
        policy.evaluate_actions = policy._own_evaluate_actions


def use_unfused_adam(model) -> None:
    """The optimizer the trainer had before (torch's per-parameter Adam): the same settings
    without ``fused``."""
    group = model.policy.optimizer.param_groups[0]
    model.policy.optimizer = torch.optim.Adam(model.policy.parameters(), lr=group["lr"], eps=group["eps"])


def set_envs(cfg: dict, envs: int) -> None:
    """`envs` games per step, with n_steps scaled to keep the rollout size (n_steps * envs) and
    so the update's work per rollout."""
    size = cfg["ppo"]["n_steps"] * cfg["envs"]
    cfg["envs"], cfg["ppo"]["n_steps"] = envs, max(1, size // envs)


def measure(cfg: dict, path: str, rollouts: int, workdir: Path) -> dict:
    cfg = copy.deepcopy(cfg)
    path, _, envs = path.partition("@")
    if envs:
        set_envs(cfg, int(envs))
    dense = path.endswith(DENSE)
    use_dense_forward(dense)
    path = path.removesuffix(DENSE)
    cfg["imitation"]["samples"] = 0
    cfg["distillation"]["decisions"] = 0
    torch.set_num_threads(cfg["torch_threads"])
    opp = cfg["opponents"]
    pool = OpponentPool(opp["mix"], opp["snapshot_sample"], opp["snapshot_window"], seed=cfg["seed"])
    counter = {"env": 0.0, "opponents": 0.0}
    # The snapshot: an untrained model of the config's network, exported as the trainer does.
    seed_env = DummyVecEnv([lambda: T.make_env(cfg, lambda rng, n: ["random"] * n)])
    export_model(T.make_model(cfg, seed_env, workdir / "tb"), workdir / "snapshot.safetensors", cfg, 0)
    pool.add_snapshot(workdir / "snapshot.safetensors")
    if path != "batched":
        _time_python_opponents(pool, counter)
    venv = build(cfg, path, pool, counter)
    model = T.make_model(cfg, venv, workdir / "tb")
    model.tensorboard_log = None
    if dense:
        use_unfused_adam(model)
    per_rollout = cfg["ppo"]["n_steps"] * venv.num_envs
    model.learn(per_rollout)  # warm-up: compile, first rollout and update
    counter.update(env=0.0, opponents=0.0)
    OPPONENT_TIME["opponents"] = 0.0
    phases = Phases()
    start, cpu_start, steps0 = time.perf_counter(), time.process_time(), model.num_timesteps
    model.learn(rollouts * per_rollout, callback=phases, reset_num_timesteps=False)
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu_start
    if path != "batched":
        counter["opponents"] = OPPONENT_TIME["opponents"]
    steps = model.num_timesteps - steps0
    return {
        "steps": steps,
        "wall": wall,
        "cpu": cpu,
        "overall": steps / wall,
        "overall_cpu": steps / cpu,
        "env": counter["env"] - counter["opponents"],
        "opponents": counter["opponents"],
        "rollout_other": phases.rollout - counter["env"],
        "update": cpu - phases.rollout,
    }


OPPONENT_TIME = {"opponents": 0.0}  # the per-game paths' agents' act() time (classes patched once)


def _time_python_opponents(pool: OpponentPool, counter: dict) -> None:
    """Count the per-game paths' opponent moves: every agent class's act, patched once per
    class to add to OPPONENT_TIME, which `measure` reads."""
    from sorry_env import agents

    classes = {type(a) for a in pool.snapshot_agents if a is not None}
    classes |= {type(agents.make_agent(kind)) for kind in pool.mix if kind != "snapshots"}
    for cls in classes:
        if "act" in cls.__dict__ and not getattr(cls.act, "_timed", False):
            timed(cls, "act", OPPONENT_TIME, "opponents")
            cls.act._timed = True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--configs", nargs="+", default=["configs/2p.yaml", "configs/4p.yaml"])
    p.add_argument("--paths", nargs="+", default=["gym+dense", "batched"])
    p.add_argument("--rollouts", type=int, default=3, help="timed rollouts (+ updates) per path")
    p.add_argument("--envs", type=int, help="games per rollout step instead of the config's (n_steps scaled to match)")
    args = p.parse_args()
    if args.rollouts < 1:
        p.error("--rollouts must be >= 1")
    if args.envs is not None and args.envs < 1:
        p.error("--envs must be >= 1")
    for path in args.paths:
        kind, _, envs = path.partition("@")
        kind = kind.removesuffix(DENSE)
        if kind not in ("gym", "batched") and not (kind.startswith("old:") and Path(kind[4:]).is_file()):
            p.error(f"unknown path {path!r}: gym, batched or old:FILE (an existing file), with +dense and @B optional")
        if envs and not (envs.isdigit() and int(envs) >= 1):
            p.error(f"path {path!r}: @B needs a number of games >= 1")
    try:
        configs = {config: load_config(config) for config in args.configs}
    except (OSError, ValueError) as e:
        p.error(str(e))
    for config, cfg in configs.items():
        if args.envs:
            set_envs(cfg, args.envs)
        net = cfg["network"]
        print(
            f"{config}: {cfg['game']['num_players']} players, actor {net['kind']} {net['hidden']}, "
            f"value {net['value_hidden']}, envs {cfg['envs']}, n_steps {cfg['ppo']['n_steps']}, "
            f"batch {cfg['ppo']['batch_size']}, epochs {cfg['ppo']['n_epochs']}, mix {cfg['opponents']['mix']}"
        )
        results = {}
        for path in args.paths:
            with tempfile.TemporaryDirectory() as tmp:
                r = measure(cfg, path, args.rollouts, Path(tmp))
            shares = ", ".join(
                f"{k} {r[k]:.1f} s ({r[k] / r['cpu']:.0%})" for k in ("env", "opponents", "rollout_other", "update")
            )
            print(
                f"  {path:>13}: {r['overall']:7,.0f} steps/s wall ({r['wall']:.1f} s), {r['overall_cpu']:7,.0f} per "
                f"CPU second ({r['steps']} steps, {r['cpu']:.1f} CPU s: {shares})"
            )
            results.setdefault(path, []).append(r)
        base = args.paths[0]
        for path in dict.fromkeys(args.paths[1:]):
            for clock in ("overall", "overall_cpu"):
                ratio = np.median([r[clock] for r in results[path]]) / np.median([r[clock] for r in results[base]])
                print(f"  {path} / {base} ({'wall' if clock == 'overall' else 'CPU'}, medians): {ratio:.2f}x")
    print("load:", " ".join(f"{x:.2f}" for x in np.array(__import__("os").getloadavg())))


if __name__ == "__main__":
    main()
