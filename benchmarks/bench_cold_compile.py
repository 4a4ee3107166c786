"""Cold-cache cost of a first command: numba's disk caches removed, then one command timed.

    python benchmarks/bench_cold_compile.py [--rev HEAD] [--repeats 1] [-- sorry-eval args...]

The tree of git revision ``--rev`` (default: the working tree itself, ``--rev .``) is copied
into a temporary directory (``git archive``), so its ``__pycache__`` folders start empty: every
``@njit(cache=True)`` function is compiled from scratch. The command (by default
``python -m sorry_env.agents.arena.cli heuristic random --games 200 --seed 0``, sorry-eval, the issue-28
measure; in an older tree the same tournament from its home there)
then runs with that copy first on ``PYTHONPATH`` and a temporary working directory; the
wall time and the CPU seconds of the child (user + system, from ``os.wait4``) are printed.
``--warm`` runs the command a second time on the now-filled cache, for the warm figure.
Run it on an otherwise idle machine; CPU seconds are less sensitive to load than wall time.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TOURNAMENT = "sorry_env.agents.arena.cli"
DEFAULT_COMMAND = ["-m", TOURNAMENT, "heuristic", "random", "--games", "200", "--seed", "0"]
# The packages, and pyproject.toml (which says how old a tree is): a tree with one import name
# finds agents/ and training/ beside sorry_env (through its links sorry_env/agents and
# sorry_env/training, or before them through its pyproject.toml's folder).
PACKAGES = ("sorry_env", "agents", "training", "pyproject.toml")


def export_tree(rev: str, into: Path) -> Path:
    """The packages of `rev` (or of the working tree for ".") copied into `into`, caches empty."""
    if rev == ".":
        for package in PACKAGES:
            if (REPO / package).is_file():
                into.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / package, into / package)
            else:
                ignore = shutil.ignore_patterns("__pycache__")
                shutil.copytree(REPO / package, into / package, symlinks=True, ignore=ignore)  # links stay links
        return into
    blob = subprocess.run(["git", "-C", str(REPO), "archive", rev, *PACKAGES], capture_output=True, check=True).stdout
    with tarfile.open(fileobj=io.BytesIO(blob)) as tar:
        tar.extractall(into, filter="data")
    return into


def tournament_module(tree: Path) -> str:
    """The tournament command's module in `tree`: agents/arena/cli.py where it exists, else the
    older training/evaluate.py; under the one import name (issue 26: sorry_env/agents links to
    agents/, or before that pyproject.toml's package-dir maps it) inside sorry_env, before it as
    top-level packages."""
    module = "agents.arena.cli" if (tree / "agents" / "arena" / "cli.py").is_file() else "training.evaluate"
    one_name = (tree / "sorry_env" / "agents").exists() or "package-dir" in (tree / "pyproject.toml").read_text()
    return f"sorry_env.{module}" if one_name else module


def timed_run(args: list[str], tree: Path, workdir: Path) -> tuple[float, float, int]:
    """(wall seconds, child CPU seconds, exit code) of `python args` with `tree` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    env.pop("NUMBA_CACHE_DIR", None)  # numba must cache beside the sources of `tree`
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *args], cwd=workdir, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rev", default=".", help='git revision to measure, or "." for the working tree (default)')
    p.add_argument("--repeats", type=int, default=1, help="cold runs, each on a fresh copy (default 1)")
    p.add_argument("--warm", action="store_true", help="also time one run on the filled cache")
    p.add_argument("command", nargs="*", help="python arguments (default: the cold sorry-eval of issue 28)")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    if args.rev != ".":
        check = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--verify", f"{args.rev}^{{commit}}"], capture_output=True
        )
        if check.returncode:
            p.error(f"git archive {args.rev}: not a revision of this repository")
    command = args.command or DEFAULT_COMMAND
    print(f"rev {args.rev}: python {' '.join(command)}")
    for repeat in range(args.repeats):
        with tempfile.TemporaryDirectory(prefix="sorry-cold-") as tmp:
            tree = export_tree(args.rev, Path(tmp) / "tree")
            run = [tournament_module(tree) if part == TOURNAMENT else part for part in command]
            workdir = Path(tmp) / "cwd"
            workdir.mkdir()
            wall, cpu, code = timed_run(run, tree, workdir)
            print(f"cold {repeat + 1}: {wall:.1f} s wall, {cpu:.1f} CPU-s (exit {code})", flush=True)
            if code:
                return code
            if args.warm and repeat == 0:
                wall, cpu, code = timed_run(run, tree, workdir)
                print(f"warm: {wall:.1f} s wall, {cpu:.1f} CPU-s (exit {code})", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
