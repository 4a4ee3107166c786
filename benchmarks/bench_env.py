"""Steps per second of the PettingZoo env under random legal play.

Every step builds the observation and the action mask (``env.last()``), as a training loop
would. Prints raw_env, env() (PettingZoo's standard checks, in one wrapper) and raw_env in
PettingZoo's three wrappers (what env() was) for 2 and 4 players, and PettingZoo's own
connect_four beside them when ``pettingzoo[classic]`` is installed.

    python benchmarks/bench_env.py [--steps 200000]
"""

import argparse
import random
import time

import numpy as np

from sorry_env import env as wrapped_env
from sorry_env import raw_env


def steps_per_second(make_env, steps, seed=0):
    """Random legal play for `steps` steps (resetting at game end); returns steps/s."""
    e = make_env()
    rng = random.Random(seed)
    e.reset(seed=seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.reset(seed=rng.randrange(2**31))
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(legal[rng.randrange(len(legal))]))
        done += 1
    return done / (time.perf_counter() - start)


def pettingzoo_chain(raw):
    """`raw` in PettingZoo's three classic-game wrappers, as env() was before it checked the
    same things in one wrapper (sorry_env.game_env.ClassicChecks): the comparison row."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(
        wrappers.AssertOutOfBoundsWrapper(wrappers.TerminateIllegalWrapper(raw, illegal_reward=-1))
    )


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=200_000)
    args = p.parse_args()
    if args.steps < 4:
        p.error("--steps must be >= 4 (connect_four runs a quarter of them)")
    steps_per_second(lambda: raw_env(num_players=2), 2000)  # compile / warm caches first
    rows = []
    for players in (2, 4):
        raw_rate = steps_per_second(lambda n=players: raw_env(num_players=n), args.steps)
        rows.append((f"sorry raw_env, {players} players", raw_rate))
        wrapped_rate = steps_per_second(lambda n=players: wrapped_env(num_players=n), args.steps)
        rows.append((f"sorry env(), {players} players", wrapped_rate))
        chain_rate = steps_per_second(lambda n=players: pettingzoo_chain(raw_env(num_players=n)), args.steps)
        rows.append((f"sorry raw_env + PZ chain, {players}p", chain_rate))
    try:
        from pettingzoo.classic import connect_four_v3
    except ImportError:
        print("(pettingzoo[classic] not installed: connect_four comparison skipped)")
    else:
        rows.append(("connect_four_v3 raw_env", steps_per_second(connect_four_v3.raw_env, args.steps // 4)))
        rows.append(("connect_four_v3 env()", steps_per_second(connect_four_v3.env, args.steps // 4)))
    for name, rate in rows:
        print(f"{name:32s} {rate:12,.0f} steps/s")


if __name__ == "__main__":
    main()
