"""Self-play games per CPU-second of sorry-expit's game generation in one process (no Ray),
with 1 and more games searched side by side (expert_iteration.lockstep_games); the records are
checked equal. The figures of docs/research/2026-11-25-expert-iteration.md, "Batched search".

    OMP_NUM_THREADS=1 python experiments/expit_lockstep_speed.py --games 32 --lockstep 1,32
"""

import argparse
import os
import time

import numpy as np

from sorry_env.agents.value_net import pack
from sorry_env.training import expert_iteration as X

SETTINGS = {"c_puct": 0.25, "prior_temperature": 0.1, "noise_alpha": 0.3, "noise_fraction": 0.25, "sample_moves": 8}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=32)
    p.add_argument("--simulations", type=int, default=64)
    p.add_argument("--lockstep", default="1,32", help="games side by side, comma-separated")
    p.add_argument("--net", default="checkpoints/value-2p.safetensors")
    args = p.parse_args()
    params, sizes, _ = pack(args.net)
    settings = {**SETTINGS, "simulations": args.simulations}
    X.selfplay_games(params, sizes, "hasbro2003", 2, 400, {**settings, "lockstep_games": 2}, [1000, 1001], seed=9)
    first = None
    for width in (int(w) for w in args.lockstep.split(",")):
        load = os.getloadavg()[0]
        cpu = time.process_time()
        data = X.selfplay_games(
            params, sizes, "hasbro2003", 2, 400, {**settings, "lockstep_games": width}, list(range(args.games)), seed=1
        )
        cpu = time.process_time() - cpu
        same = ""
        if first is None:
            first = data
        else:
            equal = all(np.array_equal(first[k], data[k]) for k in ("states", "policy", "chosen", "won", "game"))
            same = f"; records equal to lockstep {args.lockstep.split(',')[0]}: {equal}"
        print(
            f"lockstep {width}: {args.games} games, {data['decisions']} decisions ({len(data['chosen'])} searched), "
            f"{cpu:.1f} CPU-s: {args.games / cpu:.3f} games/CPU-s, {1000 * cpu / len(data['chosen']):.2f} CPU-ms "
            f"per searched decision (load average {load:.1f}){same}",
            flush=True,
        )


if __name__ == "__main__":
    main()
