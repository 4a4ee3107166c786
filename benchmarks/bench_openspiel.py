"""Random playouts of the OpenSpiel game ``python_sorry`` through pyspiel against the same
playouts through ``raw_env`` (moves per second, player decisions only; chance nodes are
sampled by their probabilities, as OpenSpiel's examples do).

Rows: pyspiel with ``legal_actions`` + ``apply_action`` per decision; the same plus
``observation_tensor`` (what an RL loop reads); raw_env with ``last()`` (observation and mask)
+ ``step``. The ratios printed at the end are raw_env's rate over each pyspiel row's, in this run.

    python benchmarks/bench_openspiel.py [--seconds 5] [--players 2]
"""

import argparse
import os
import random
import time

import numpy as np
import pyspiel

import sorry_env
import sorry_env.openspiel  # noqa: F401  (registers python_sorry)


def pyspiel_playout(game, rng: random.Random, observe: bool) -> int:
    """One random game through pyspiel; returns the number of player decisions."""
    state = game.new_initial_state()
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes, probabilities = zip(*state.chance_outcomes())
            state.apply_action(rng.choices(outcomes, probabilities)[0])
            continue
        if observe:
            state.observation_tensor(state.current_player())
        legal = state.legal_actions()
        state.apply_action(legal[rng.randrange(len(legal))])
        decisions += 1
    return decisions


def raw_env_playout(env, rng: random.Random) -> int:
    """One random game through raw_env (observation and mask every decision)."""
    env.reset(seed=rng.randrange(2**31))
    decisions = 0
    while True:
        obs, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            return decisions
        legal = np.flatnonzero(obs["action_mask"])
        env.step(int(legal[rng.randrange(len(legal))]))
        decisions += 1


def rate(playout, seconds: float) -> float:
    playout()  # warm
    decisions, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        decisions += playout()
    return decisions / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seconds", type=float, default=5.0, help="per row (default 5)")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    args = p.parse_args()
    if args.seconds <= 0:
        p.error("--seconds must be positive")
    game = pyspiel.load_game("python_sorry", {"players": args.players})
    env = sorry_env.raw_env(num_players=args.players)
    rng = random.Random(0)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    rows = {
        "pyspiel: legal_actions + apply_action": rate(lambda: pyspiel_playout(game, rng, False), args.seconds),
        "pyspiel: + observation_tensor": rate(lambda: pyspiel_playout(game, rng, True), args.seconds),
        "raw_env: last() + step": rate(lambda: raw_env_playout(env, rng), args.seconds),
    }
    for name, value in rows.items():
        print(f"{name:40s} {value:10,.0f} decisions/s")
    raw = rows["raw_env: last() + step"]
    print(
        f"raw_env / pyspiel: {raw / rows['pyspiel: legal_actions + apply_action']:.2f}x bare, "
        f"{raw / rows['pyspiel: + observation_tensor']:.2f}x with observations"
    )
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
