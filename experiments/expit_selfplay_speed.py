"""Self-play decisions per second of sorry-expit's Ray workers, with 1 and 2 workers (a local
Ray of its own; the figures of docs/research/2026-11-25-expert-iteration.md).

    python experiments/expit_selfplay_speed.py --games 24 --simulations 64
"""

import argparse
import os
import time

import ray

from sorry_env.agents.value_net import pack
from sorry_env.training import expert_iteration as X
from sorry_env.training.config import EXPIT_DEFAULTS, merge_config


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=24)
    p.add_argument("--simulations", type=int, default=64)
    p.add_argument("--net", default="checkpoints/value-2p.safetensors")
    args = p.parse_args()
    params, sizes, _ = pack(args.net)
    env = {"OMP_NUM_THREADS": "1", "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    ray.init(address="local", include_dashboard=False, logging_level="WARNING", runtime_env={"env_vars": env})
    for workers in (1, 2):
        cfg = merge_config(
            EXPIT_DEFAULTS, {"expert_iteration": {"simulations": args.simulations, "workers": workers}}, ""
        )
        pool = X.WorkerPool(cfg, workers)
        pool.play(params, sizes, games=2 * workers, seed=99)  # warm-up: imports and numba caches loaded
        start = time.perf_counter()
        data = pool.play(params, sizes, games=args.games, seed=1)
        wall = time.perf_counter() - start
        print(
            f"{workers} worker(s): {args.games} games, {data['decisions']} decisions "
            f"({len(data['chosen'])} searched) in {wall:.1f} s: {data['decisions'] / wall:.0f} decisions/s, "
            f"{len(data['chosen']) / wall:.0f} searched/s; load average {os.getloadavg()[0]:.1f}",
            flush=True,
        )
        pool.close()
    ray.shutdown()


if __name__ == "__main__":
    main()
