"""Stale numba caches: every package that caches compiled code clears it when any source it
compiles against changes (sorry_env.numba_cache), by one rule."""

import ast
import importlib
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import sorry_env  # noqa: F401
from sorry_env import (
    agents,  # noqa: F401  (importing a package runs its cache check)
    numba_cache,
    training,  # noqa: F401
)

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIRST_PARTY = ("sorry_env", "agents", "training", "benchmarks")
# Folders imported as sorry_env.<folder> (through the links sorry_env/agents, sorry_env/training).
INSTALLED_UNDER_SORRY_ENV = ("agents", "training")


def _cache_files(package_dir):
    cache = package_dir / "__pycache__"
    return sorted(p.name for p in cache.glob("*.nb*"))


def test_a_changed_dependency_clears_the_package_cache(tmp_path):
    dep, pkg = tmp_path / "dep", tmp_path / "pkg"
    for d in (dep, pkg):
        (d / "__pycache__").mkdir(parents=True)
        (d / "mod.py").write_text("X = 1\n")
    (pkg / "__pycache__" / "mod.f-1.py311.nbi").write_text("index")
    (pkg / "__pycache__" / "mod.f-1.py311.1.nbc").write_text("code")
    numba_cache.clear_stale(pkg, dep)  # no record of the sources: treated as stale
    assert _cache_files(pkg) == []
    (pkg / "__pycache__" / "mod.f-1.py311.nbi").write_text("index")
    numba_cache.clear_stale(pkg, dep)  # nothing changed: the cache stays
    assert _cache_files(pkg) == ["mod.f-1.py311.nbi"]
    (dep / "mod.py").write_text("X = 2\n")  # the dependency changed
    numba_cache.clear_stale(pkg, dep)
    assert _cache_files(pkg) == []
    (pkg / "__pycache__" / "mod.f-1.py311.nbi").write_text("index")
    (dep / "new.py").write_text("Y = 1\n")  # a new dependency module counts as a change too
    numba_cache.clear_stale(pkg, dep)
    assert _cache_files(pkg) == []
    (pkg / "__pycache__" / "mod.f-1.py311.nbi").write_text("index")
    (pkg / "mod.py").write_text("X = 3\n")  # and so does the package's own source
    numba_cache.clear_stale(pkg, dep)
    assert _cache_files(pkg) == []


def _caches_compiled_code(path):
    """Does the module call anything (njit, jit, ...) with ``cache=True``?"""
    return any(
        isinstance(node, ast.Call)
        and any(k.arg == "cache" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords)
        for node in ast.walk(ast.parse(path.read_text()))
    )


def _folder_of(module: str) -> str:
    """The repository folder an import name lives in (sorry_env.agents.x: agents/)."""
    parts = module.split(".")
    if parts[0] == "sorry_env" and len(parts) > 1 and parts[1] in INSTALLED_UNDER_SORRY_ENV:
        return parts[1]
    return parts[0]


def _imported_first_party(package_dir):
    """First-party packages the modules of `package_dir` import (other than itself)."""
    found = set()
    for path in package_dir.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            found.update(folder for n in names if (folder := _folder_of(n)) in FIRST_PARTY)
    found.discard(package_dir.name)
    return found


def test_every_package_that_caches_compiled_code_watches_everything_it_compiles_against():
    """The rule of sorry_env.numba_cache. A directory whose modules cache compiled code
    (``cache=True``) must be a package that calls clear_stale with every first-party package it
    imports, and what those depend on."""
    packages = [ROOT / name for name in FIRST_PARTY]
    subpackages = [init.parent for package in packages for init in package.glob("*/__init__.py")]
    for sub in subpackages:  # importing a package runs its cache check
        parent = sub.parent.name
        importlib.import_module(
            f"sorry_env.{parent}.{sub.name}" if parent in INSTALLED_UNDER_SORRY_ENV else f"{parent}.{sub.name}"
        )
    for directory in packages + subpackages + [ROOT / "tests"]:
        if not any(_caches_compiled_code(p) for p in directory.glob("*.py")):
            continue
        name = directory.name
        assert name in numba_cache.WATCHED, f"{name}/ caches compiled code but never calls numba_cache.clear_stale"
        needed, todo = set(), list(_imported_first_party(directory))
        while todo:  # the dependencies' own dependencies: their code is compiled in too
            dep = todo.pop()
            if dep not in needed:
                needed.add(dep)
                todo.extend(numba_cache.WATCHED.get(dep, ()))
        missing = needed - set(numba_cache.WATCHED[name]) - {name}  # its own sources are always watched
        assert not missing, f"{name}/ compiles against {sorted(missing)} but does not watch them for changes"


def _fresh_function(module: str):
    """A new compiled function that claims to live in `module` (never compiled before)."""
    from numba import njit

    def add_one(x):
        return x + 1

    add_one.__module__ = module
    return njit(add_one)


def test_a_first_party_compile_says_so_once_on_stderr(capfd, monkeypatch):
    monkeypatch.setattr(numba_cache.NOTICE, "shown", False)
    _fresh_function("tests.elsewhere")(1)  # not a caching package of the project: no line
    assert numba_cache.COMPILE_NOTICE not in capfd.readouterr().err
    _fresh_function("sorry_env.somewhere")(1)
    _fresh_function("sorry_env.agents.somewhere")(2)
    err = capfd.readouterr().err
    assert err.count(numba_cache.COMPILE_NOTICE) == 1  # one line per process, however much compiles
    assert "CPU-seconds" in numba_cache.COMPILE_NOTICE  # and it says how long it usually takes


@pytest.mark.slow
def test_after_the_warm_step_the_main_commands_compile_nothing(tmp_path):
    # A cache of its own (cold): the project's caches may already hold what the warm step misses.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    warm = subprocess.run(
        [sys.executable, "-m", "sorry_env.training.warm"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert warm.returncode == 0 and "caches warm" in warm.stdout, warm.stderr[-3000:]
    evaluation = subprocess.run(
        [sys.executable, "-m", "sorry_env.agents.arena.cli", "heuristic", "random", "--games", "4", "--workers", "2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert evaluation.returncode == 0, evaluation.stderr[-3000:]
    assert numba_cache.COMPILE_NOTICE not in evaluation.stderr
    # The search agents (which search only where there is a choice) and expert iteration's
    # self-play in a Ray worker (whose arrays come read-only out of the object store).
    value_net = ROOT / "checkpoints" / "value-2p.safetensors"
    later = [
        [*("sorry_env.agents.arena.cli", f"azsearch:net={value_net},simulations=4", "montecarlo:iterations=4"),
         *("--games", "2", "--workers", "1", "--out", str(tmp_path / "eval"))],
        # (from the project's folder: the config names its generation 0 relative to it)
        ["sorry_env.training.expert_iteration", "configs/expit-smoke.yaml", "--out", str(tmp_path / "expit")],
    ]  # fmt: skip
    for args in later:
        run = subprocess.run(
            [sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr[-3000:]
        assert numba_cache.COMPILE_NOTICE not in run.stderr, (args[0], run.stderr[-3000:])


def test_the_warm_step_asks_the_agents_in_a_position_with_a_choice():
    # The search agents play a lone legal move without searching, which would compile nothing.
    from sorry_env.board import game
    from sorry_env.board.rules import DEFAULT_PRESET
    from sorry_env.training.warm import _a_choice

    assert len(game.legal_actions(_a_choice(DEFAULT_PRESET, 2), DEFAULT_PRESET)) >= 2


def test_the_warm_step_says_it_is_still_compiling_while_a_step_runs():
    """A cold step compiles for a minute; the warm step prints a line every few seconds meanwhile
    (issue 36: at least every 10 s), and none once the step is done."""
    import io
    import time

    from sorry_env.training.warm import TICK_SECONDS, ticking

    assert TICK_SECONDS <= 10
    out = io.StringIO()
    with ticking("[2/4]", out, every=0.05):
        time.sleep(0.5)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 2 and all(line.strip().startswith("[2/4] still compiling: ") for line in lines)
    time.sleep(0.2)
    assert out.getvalue().splitlines() == lines  # the ticker stopped with the block


def test_a_helper_compiled_for_compiled_callers_only_refuses_a_call_from_python():
    # engine.compiled(from_python=False) leaves numba's Python wrapper out (COMPILE COST in
    # sorry_env/board/engine.py); a call from Python must be a TypeError, not a crash.
    from sorry_env.board import engine as E

    with pytest.raises(TypeError, match="_rand32 runs inside compiled code only"):
        E._rand32(np.zeros(E.STATE_SIZE, dtype=np.int64))
    # ... while the compiled callers that use it run (a dealt game draws through it).
    from sorry_env.board import game

    assert E.to_move(game.new_state("hasbro2003", 2, seed=0)) in (0, 2)
