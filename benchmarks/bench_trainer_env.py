"""Learner steps/s of the trainer's per-game env, today's against the one deleted in 92ae938.

The regression check of docs/research/2026-11-24-trainer-speed.md: the same config's opponent
pool (one snapshot of the untrained network in it), the same random legal learner moves, 16
games in a DummyVecEnv, no network updates; the two envs alternate ``--rounds`` times, so a
change in the machine's load hits both. ``FILE`` is the deleted env:
``git show 92ae938^:training/selfplay_env.py > FILE``.

    python benchmarks/bench_trainer_env.py FILE [--config configs/quick.yaml] [--steps 400] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from bench_trainer import load_old_env  # a sibling script (benchmarks/ is on the path)
from stable_baselines3.common.vec_env import DummyVecEnv

from sorry_env.training import train as T
from sorry_env.training.config import load_config
from sorry_env.training.export import export_model
from sorry_env.training.opponents import OpponentPool


def venv_of(kind: str, cfg: dict, pool: OpponentPool, old_class) -> DummyVecEnv:
    g = cfg["game"]
    if kind == "gym":
        make = lambda: T.make_env(cfg, pool.sample)  # noqa: E731
    else:
        make = lambda: old_class(pool, g["num_players"], g["rules"], g["max_turns"])  # noqa: E731
    venv = DummyVecEnv([make for _ in range(cfg["envs"])])
    venv.seed(cfg["seed"])
    return venv


def steps_per_second(venv: DummyVecEnv, steps: int, rng: np.random.Generator) -> float:
    venv.reset()
    start = time.perf_counter()
    for _ in range(steps):
        masks = np.array(venv.env_method("action_masks"))
        venv.step((rng.random(masks.shape) * masks).argmax(axis=1))
    return steps * venv.num_envs / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old_env", help="the deleted training/selfplay_env.py, saved to a file")
    p.add_argument("--config", default="configs/quick.yaml")
    p.add_argument("--steps", type=int, default=400, help="vector steps per measurement")
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    cfg = load_config(args.config)
    opp = cfg["opponents"]
    pool = OpponentPool(opp["mix"], opp["snapshot_sample"], opp["snapshot_window"], seed=cfg["seed"])
    with tempfile.TemporaryDirectory() as tmp:
        seed_env = DummyVecEnv([lambda: T.make_env(cfg, lambda rng, n: ["random"] * n)])
        export_model(T.make_model(cfg, seed_env, Path(tmp) / "tb"), Path(tmp) / "snap.safetensors", cfg, 0)
        pool.add_snapshot(Path(tmp) / "snap.safetensors")
        old_class = load_old_env(args.old_env)
        envs = {kind: venv_of(kind, cfg, pool, old_class) for kind in ("gym", "old")}
        rng = np.random.default_rng(0)
        for venv in envs.values():
            steps_per_second(venv, 20, rng)  # warm-up (compiles)
        results = {kind: [] for kind in envs}
        for _ in range(args.rounds):
            for kind, venv in envs.items():
                results[kind].append(steps_per_second(venv, args.steps, rng))
    print(f"{args.config}: mix {opp['mix']}, {cfg['envs']} games, {args.steps} steps x {args.rounds} rounds")
    for kind, speeds in results.items():
        listed = ", ".join(f"{s:,.0f}" for s in speeds)
        print(f"  {kind}: {listed} learner steps/s (median {np.median(speeds):,.0f})")
    print(f"  gym / old: {np.median(results['gym']) / np.median(results['old']):.2f}x; load {os.getloadavg()}")


if __name__ == "__main__":
    main()
