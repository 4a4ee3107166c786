"""Steps per second of the batched env (sorry_env.vector) for batch sizes 1..4096.

Self-play: every step is one move in each of B games, with observations (float32[B, 1184])
and masks (int8[B, N]) built for the seat to move and automatic resets; random legal actions
are drawn by a small compiled loop (timed with the env, as an agent's choice would be).
Compiled opponents: the learner plays random legal moves against random / heuristic
opponents; reported per learner step, with the opponent moves each learner step costs.
Beside them in the same run: the engine's own random playouts (one core, no observations),
and pgx's batched ``backgammon`` (jax on CPU, its own auto-reset and observations) when pgx
is installed (``pip install -e .[bench]``). Compare ratios within one run: the machine may
be shared.

    python benchmarks/bench_vector.py [--sizes 1 64 1024 4096] [--seconds 3] [--players 2]
        [--threads 2] [--no-pgx]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from numba import njit

from sorry_env import vector as V
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import DEFAULT_PRESET


@njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
def random_legal(masks, rng_state, out):
    """out[b] := a uniformly random legal action of game b (a 64-bit LCG in rng_state[0])."""
    for b in range(masks.shape[0]):
        n = 0
        for a in range(masks.shape[1]):
            n += masks[b, a]
        rng_state[0] = rng_state[0] * 6364136223846793005 + 1442695040888963407
        k = ((rng_state[0] >> 33) & 0x7FFFFFFF) % n
        for a in range(masks.shape[1]):
            if masks[b, a]:
                if k == 0:
                    out[b] = a
                    break
                k -= 1


def timed_steps(env, seconds):
    """Random legal play for about `seconds`; returns (steps per second, infos of the run)."""
    obs, _ = env.reset(seed=0)
    actions = np.zeros(env.num_envs, dtype=np.int64)
    rng_state = np.ones(1, dtype=np.int64)
    random_legal(obs["action_mask"], rng_state, actions)
    obs, *_ = env.step(actions)  # warm
    steps = opponent_moves = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        random_legal(obs["action_mask"], rng_state, actions)
        obs, _, _, _, infos = env.step(actions)
        steps += 1
        opponent_moves += int(infos.get("opponent_moves", np.zeros(1)).sum())
    elapsed = time.perf_counter() - start
    return steps * env.num_envs / elapsed, opponent_moves / (steps * env.num_envs)


def engine_moves_per_second(players, seconds):
    rules = game.rules_array(DEFAULT_PRESET)
    moves, seed = 0, 0
    E.random_playout(game.new_state(DEFAULT_PRESET, players, seed=0), rules, 2000)
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        moves += E.random_playout(game.new_state(DEFAULT_PRESET, players, seed=seed), rules, 2000)
        seed += 1
    return moves / (time.perf_counter() - start)


def pgx_steps_per_second(batch, seconds):
    """pgx backgammon, B games under jax.vmap with auto-reset, random legal actions drawn in
    the same jitted step; None when pgx is not installed."""
    try:
        import jax
        import jax.numpy as jnp
        import pgx
        from pgx.experimental import auto_reset
    except ImportError:
        return None
    env = pgx.make("backgammon")
    init = jax.jit(jax.vmap(env.init))
    step_env = jax.vmap(auto_reset(env.step, env.init))

    @jax.jit
    def play(state, key):
        key, act_key, step_key = jax.random.split(key, 3)
        logits = jnp.where(state.legal_action_mask, 0.0, -jnp.inf)
        actions = jax.random.categorical(act_key, logits, axis=-1)
        return step_env(state, actions, jax.random.split(step_key, batch)), key

    key = jax.random.PRNGKey(0)
    state = init(jax.random.split(key, batch))
    state, key = play(state, key)  # compile
    state.observation.block_until_ready()
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, key = play(state, key)
        steps += 1
    state.observation.block_until_ready()
    return steps * batch / (time.perf_counter() - start)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[1, 16, 256, 1024, 4096])
    p.add_argument("--seconds", type=float, default=3.0, help="timed seconds per row")
    p.add_argument("--players", type=int, default=2, choices=(2, 3, 4))
    p.add_argument("--threads", type=int, default=2, help="numba threads for parallel=True rows")
    p.add_argument("--no-pgx", action="store_true", help="skip pgx even when installed")
    p.add_argument(
        "--pgx-sizes",
        type=int,
        nargs="+",
        default=None,
        help="batch sizes for pgx (default: --sizes; each size compiles anew)",
    )
    args = p.parse_args()
    if any(size < 1 for size in args.sizes):
        p.error("--sizes must be positive")
    import numba

    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    # imported here, after the thread count is set: the import compiles the opponents' code
    from sorry_env.vector_opponents import VectorOpponentEnv

    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}, numba threads {numba.get_num_threads()}")
    print(
        f"engine random playouts (1 core, no observations): "
        f"{engine_moves_per_second(args.players, args.seconds):,.0f} moves/s"
    )
    rows = []
    for size in args.sizes:
        for parallel in (False, True):
            mode = "parallel" if parallel else "serial"
            env = V.SorryVectorEnv(size, args.players, parallel=parallel, copy=False)
            rate, _ = timed_steps(env, args.seconds)
            rows.append((f"self-play, {mode}, copy=False", size, rate, ""))
            print(f"{rows[-1][0]:44s} B={size:5d} {rate:12,.0f} steps/s", flush=True)
        env = V.SorryVectorEnv(size, args.players, copy=True)
        rate, _ = timed_steps(env, args.seconds)
        print(f"{'self-play, default, copy=True':44s} B={size:5d} {rate:12,.0f} steps/s", flush=True)
        for opponents in ("random", "heuristic"):
            env = VectorOpponentEnv(size, args.players, opponents=opponents, copy=False)
            rate, per_step = timed_steps(env, args.seconds)
            print(
                f"{'vs compiled ' + opponents + ', learner steps':44s} B={size:5d} {rate:12,.0f} steps/s  "
                f"({1e6 / rate:.2f} us per learner step, {per_step:.2f} opponent moves each)",
                flush=True,
            )
        if not args.no_pgx and (args.pgx_sizes is None or size in args.pgx_sizes):
            rate = pgx_steps_per_second(size, args.seconds)
            if rate is None:
                print("(pgx not installed: pip install pgx, or the bench extra)")
                args.no_pgx = True
            else:
                print(f"{'pgx backgammon (jax CPU, auto-reset)':44s} B={size:5d} {rate:12,.0f} steps/s", flush=True)
    for size in args.pgx_sizes or []:
        if size not in args.sizes and not args.no_pgx:
            rate = pgx_steps_per_second(size, args.seconds)
            print(f"{'pgx backgammon (jax CPU, auto-reset)':44s} B={size:5d} {rate:12,.0f} steps/s", flush=True)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


if __name__ == "__main__":
    main()
