"""How long pictures take: one rgb_array frame, and a 120-turn game replayed to a GIF.

    python benchmarks/bench_render.py [--frames 200] [--turns 120] [--repeats 3]

- ``rgb_array frame``: ``raw_env(render_mode="rgb_array").render()`` on the positions of a
  random 4-player game (median over ``--frames`` positions, drawn at the default 640 px), beside
  the ANSI text board of the same positions for scale;
- ``env step``: the cost the render modes add to ``step`` (stable pawn labels are tracked
  only when a render mode is set), as steps per second under random play;
- ``replay to GIF``: ``sorry_env.replay.replay`` (re-play through the engine, checking every
  state) plus ``write_gif`` of a game of exactly ``--turns`` cards (random play, 2 players;
  the first seed whose game lasts that long), best of ``--repeats``.

Timings are wall-clock on whatever else the machine is doing; compare rows of one run.
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import tempfile
import time

import numpy as np

from sorry_env import raw_env
from sorry_env import replay as R
from sorry_env.board import game
from sorry_env.board.rules import DEFAULT_PRESET


def env_positions(render_mode, frames, seed=0):
    """A 4-player env under random play, and a function stepping it one legal move (resetting at the end)."""
    e = raw_env(num_players=4, render_mode=render_mode)
    e.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def advance():
        obs, _, term, trunc, _ = e.last()
        if term or trunc:
            e.reset(seed=int(rng.integers(2**31)))
            return
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))

    return e, advance


def median_render_ms(render_mode, frames):
    e, advance = env_positions(render_mode, frames)
    times = []
    for _ in range(frames):
        advance()
        start = time.perf_counter()
        e.render()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def steps_per_second(render_mode, steps):
    _, advance = env_positions(render_mode, steps)
    start = time.perf_counter()
    for _ in range(steps):
        advance()
    return steps / (time.perf_counter() - start)


def game_of(turns, rules=DEFAULT_PRESET):
    """The record of a random 2-player game lasting exactly `turns` cards."""
    for seed in range(10_000):
        rng = np.random.default_rng(seed)
        state = game.new_state(rules, 2, seed=seed)
        actions = []
        while game.winner(state) is None:
            action = int(rng.choice(game.legal_actions(state, rules)))
            actions.append(action)
            state = game.step(state, rules, action)
        if len(actions) == turns:
            return R.record_game(rules, (0, 2), seed, actions)
    raise RuntimeError(f"no random game of exactly {turns} turns in 10,000 seeds")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--frames", type=int, default=200)
    p.add_argument("--turns", type=int, default=120)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--steps", type=int, default=5000, help="env steps for the step-rate rows")
    args = p.parse_args()
    median_render_ms("rgb_array", 5)  # compile and warm caches first
    print(f"{'rgb_array frame (640 px)':36s} {median_render_ms('rgb_array', args.frames):8.1f} ms median")
    print(f"{'ansi frame':36s} {median_render_ms('ansi', args.frames):8.1f} ms median")
    for mode in (None, "ansi", "rgb_array"):
        label = f"env step, render_mode={mode!r}"
        print(f"{label:36s} {steps_per_second(mode, args.steps):8,.0f} steps/s (no render() calls)")
    record = game_of(args.turns)
    best = best_replay = None
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "game.gif"
        for _ in range(args.repeats):
            start = time.perf_counter()
            rep = R.replay(record)
            replayed = time.perf_counter()
            frames = R.write_gif(rep, out)
            end = time.perf_counter()
            if best is None or end - start < best:
                best, best_replay = end - start, replayed - start
        size = out.stat().st_size
    print(
        f"{f'replay {args.turns}-turn game to GIF':36s} {best:8.2f} s best of {args.repeats} "
        f"({best_replay:.2f} s re-playing and checking, {frames} frames, {size / 1e6:.1f} MB)"
    )


if __name__ == "__main__":
    main()
