"""The scripts in examples/ run from start to end at a tiny budget (each in its own process,
as a reader would run it, from a folder that is not the repository: shipped files are found
through the catalog and package paths, never the working directory)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_example(name, *args, cwd, script=None):
    """stdout of examples/NAME (or of `script`, a copy of one) run with ARGS in folder `cwd`."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, str(script or ROOT / "examples" / name), *args],
        cwd=cwd,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Warning" not in result.stderr, result.stderr[-3000:]
    return result.stdout


def test_pettingzoo_loop_against_a_shipped_policy(tmp_path):
    out = run_example("pettingzoo_vs_policy.py", "--games", "2", cwd=tmp_path)
    assert "of 2 games against hasbro2003-2p" in out


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_sb3_maskable_ppo_then_sorry_eval(tmp_path):
    out_dir = tmp_path / "not-made-yet"  # the default folder does not exist on a first run either
    out = run_example(
        "sb3_maskable_ppo.py",
        *("--timesteps", "128", "--n-steps", "64", "--progress-every", "64"),
        *("--eval-games", "4", "--workers", "1", "--out", str(out_dir)),
        cwd=tmp_path,
    )
    assert "trained 128 steps" in out and (out_dir / "model.zip").exists()
    assert "      64 / 128 steps" in out and "     128 / 128 steps" in out  # a progress line every 64 steps
    for opponent in ("random", "heuristic"):
        assert (out_dir / f"eval-{opponent}" / "results.json").exists()
    assert "model.zip" in out and "4 games in" in out


def test_single_file_selfplay_trainer(tmp_path):
    out = run_example(
        "selfplay_ppo.py",
        "--total-timesteps",
        "128",
        "--num-envs",
        "2",
        "--num-steps",
        "64",
        "--snapshot-every",
        "1",
        "--eval-games",
        "2",
        cwd=tmp_path,
    )
    assert "update 1/1: 128 steps" in out and "steps/s" in out
    assert "vs heuristic: won" in out and "vs random: won" in out


def test_the_single_file_ppo_trains_when_copied_alone_into_an_empty_folder(tmp_path):
    """CleanRL's habit: copy the file, run it (issue 39). Only sorry_env itself (an installed
    package here: PYTHONPATH) is importable beside it."""
    import shutil

    copied = shutil.copy(ROOT / "examples" / "selfplay_ppo.py", tmp_path)
    out = run_example(
        "selfplay_ppo.py", "--total-timesteps", "2048", "--save", "mine.safetensors", cwd=tmp_path, script=copied
    )
    assert "update 1/1: 2048 steps" in out and "steps/s" in out, out
    assert "vs heuristic: won" in out and "wrote mine.safetensors" in out
    assert (tmp_path / "mine.safetensors").stat().st_size > 0


def test_the_single_file_ppo_imports_the_env_only():
    """No relative imports and nothing of sorry_env.training: what makes it copyable."""
    import ast

    tree = ast.parse((ROOT / "examples" / "selfplay_ppo.py").read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"relative import at line {node.lineno}"
            imported.add(node.module)
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    ours = {name for name in imported if name.split(".")[0] == "sorry_env"}
    assert ours and not any(name.startswith(("sorry_env.training", "sorry_env.agents")) for name in ours)
