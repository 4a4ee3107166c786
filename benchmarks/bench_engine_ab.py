"""Engine speed of this tree against an older commit, in one process: the ratio of moves/s.

    python benchmarks/bench_engine_ab.py --base fe37363 [--rules hasbro2003 --players 4] [--games 3000]

The engine of commit ``--base`` is taken with ``git archive`` into a temporary directory and
imported under another package name (``sorry_env_base``), so both engines run the same random
playouts (the move counts must agree: same seeds, same play) in the same process, timed
alternately ``--repeats`` times; the best time of each is kept. Alternating in one process
makes the ratio robust to a busy machine, which slows both alike.
"""

from __future__ import annotations

import argparse
import importlib
import io
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game


def import_base(rev: str, into: Path):
    """(engine, game) modules of sorry_env at git revision `rev`, as package sorry_env_base."""
    blob = subprocess.run(["git", "archive", rev, "sorry_env"], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    (into / "sorry_env").rename(into / "sorry_env_base")
    sys.path.insert(0, str(into))
    # The board game's modules live in sorry_env/board/ since issue 38, at the top level before.
    home = "sorry_env_base.board" if (into / "sorry_env_base" / "board" / "engine.py").exists() else "sorry_env_base"
    return importlib.import_module(f"{home}.engine"), importlib.import_module(f"{home}.game")


def playouts(engine):
    @njit  # not cached: benchmarks do not cache compiled code (sorry_env.numba_cache)
    def play_games(rules, active, games, seed):
        state = np.zeros(engine.STATE_SIZE, dtype=np.int64)
        moves = 0
        for g in range(games):
            engine.init_state(state, rules, active, (seed + g * 7919) & 0xFFFFFFFF)
            moves += engine.random_playout(state, rules, 100000)
        return moves

    return play_games


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True, help="git revision to compare with (e.g. main, a commit)")
    p.add_argument("--rules", default="hasbro2003", help="a preset both revisions have")
    p.add_argument("--players", type=int, default=4, choices=(2, 3, 4))
    p.add_argument("--games", type=int, default=3000)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    if args.games < 1 or args.repeats < 1:
        p.error("--games and --repeats must be >= 1")
    with tempfile.TemporaryDirectory() as tmp:
        try:
            base_engine, base_game = import_base(args.base, Path(tmp))
        except subprocess.CalledProcessError as e:
            p.error(f"git archive {args.base}: {e.stderr.decode().strip()}")
        try:
            rules = (base_game.rules_array(args.rules), game.rules_array(args.rules))
            seats = game.seats_for(args.players, rules=args.rules)
        except ValueError as e:
            p.error(str(e))
        active = np.zeros(4, dtype=np.int64)
        active[list(seats)] = 1
        runs = (playouts(base_engine), playouts(E))
        for run, r in zip(runs, rules):
            run(r, active, 5, 1)  # compile
        best, moves = [np.inf, np.inf], [0, 0]
        for _ in range(args.repeats):
            for k in (0, 1):
                start = time.perf_counter()
                moves[k] = runs[k](rules[k], active, args.games, 0)
                best[k] = min(best[k], time.perf_counter() - start)
    if moves[0] != moves[1]:
        print(f"the two engines played differently: {moves[0]} vs {moves[1]} moves", file=sys.stderr)
        return 1
    print(
        f"{args.rules}, {args.players} players, {args.games} games ({moves[1]} moves), best of {args.repeats}: "
        f"{args.base} {moves[0] / best[0]:,.0f} moves/s, this tree {moves[1] / best[1]:,.0f} moves/s, "
        f"ratio {best[0] / best[1]:.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
