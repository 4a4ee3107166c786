"""The scripts in examples/ run from start to end at a tiny budget (each in its own process,
as a reader would run it, from a folder that is not the repository: shipped files are found
through the catalog and package paths, never the working directory)."""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_example(name, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
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
