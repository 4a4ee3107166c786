"""Tournament time with a policy network: lockstep batches (sorry-eval's path) against one
game at a time, the same games back to back, and whether their records are identical.

    python benchmarks/bench_lockstep.py [--games 400] [--workers 2] [--opponent heuristic]
        [--policy checkpoints/sorry-2p.safetensors]

The one-game-at-a-time run switches lockstep off by making ``PolicyAgent.acts_in_batches``
False at import (spawned workers re-import this script, so they see it too); the environment
variable SORRY_BENCH_SEQUENTIAL carries the choice to them.
"""

import argparse
import os
import subprocess
import sys
import time

from sorry_env.agents.policy import PolicyAgent

if os.environ.get("SORRY_BENCH_SEQUENTIAL"):
    PolicyAgent.acts_in_batches = property(lambda self: False)


def run(args):
    from sorry_env.agents.arena.tournament import run_tournament

    start = time.perf_counter()
    results = run_tournament([args.policy, args.opponent], games=args.games, seed=args.seed, workers=args.workers)
    return time.perf_counter() - start, results


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=400)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--policy", default="checkpoints/sorry-2p.safetensors")
    p.add_argument("--opponent", default="heuristic")
    p.add_argument("--records", help=argparse.SUPPRESS)  # the child run writes its records here
    args = p.parse_args()
    if args.records:
        elapsed, results = run(args)
        import json

        with open(args.records, "w") as f:
            json.dump({"seconds": elapsed, "games": results["games"]}, f)
        return
    import json
    import tempfile

    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("lockstep", "one at a time"):
            path = os.path.join(tmp, "records.json")
            env = dict(os.environ, SORRY_BENCH_SEQUENTIAL="1" if mode != "lockstep" else "")
            load = os.getloadavg()[0]
            subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--games",
                    str(args.games),
                    "--workers",
                    str(args.workers),
                    "--seed",
                    str(args.seed),
                    "--policy",
                    args.policy,
                    "--opponent",
                    args.opponent,
                    "--records",
                    path,
                ],
                env=env,
                check=True,
            )
            with open(path) as f:
                rows[mode] = json.load(f)
            wins = sum(0 in record["winners"] for record in rows[mode]["games"])
            print(
                f"{mode:14s} {args.games} games in {rows[mode]['seconds']:6.1f} s, policy wins {wins}, "
                f"load average {load:.1f}",
                flush=True,
            )
    print("records identical:", rows["lockstep"]["games"] == rows["one at a time"]["games"])


if __name__ == "__main__":
    main()
