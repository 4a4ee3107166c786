"""The trust rule for files (issue 23): specs stored in files are data, never imported or
unpickled; every file that comes in is checked for type and size before it is read."""

import json
import os
import subprocess
import sys

import pytest

from training.config import load_config

SMOKE = "configs/smoke.yaml"


def marker_spec(marker) -> str:
    """An import spec whose construction creates `marker`: the stand-in for arbitrary code."""
    return f'timeit:timeit:stmt=__import__("pathlib").Path("{marker}").touch(),number=1'


def run_cli(module, *args, timeout=300, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", module, *map(str, args)],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
        **kwargs,
    )


def plant_run(run_dir, mix_spec):
    """A copied run directory whose stored config's opponent mix names `mix_spec`."""
    run_dir.mkdir(parents=True)
    cfg = load_config(SMOKE)
    cfg["opponents"]["mix"] = {"random": 0.5, mix_spec: 0.5}
    state = {
        "config": cfg,
        "snapshots": [],
        "evaluations": [],
        "imitation": {},
        "last": {"snapshot": -1, "evaluation": -1, "checkpoint": 1024},
        "wall_seconds": 1.0,
    }
    (run_dir / "run_state.json").write_text(json.dumps(state))
    (run_dir / "checkpoint.safetensors").write_bytes(b"")  # never read: the state is checked first


def test_export_never_imports_a_stored_spec(tmp_path):
    marker = tmp_path / "owned"
    plant_run(tmp_path / "runs" / "smoke", marker_spec(marker))
    result = run_cli("training.export", tmp_path / "runs" / "smoke", tmp_path / "out.safetensors")
    assert not marker.exists(), "the run directory's stored spec ran code"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "imports Python code" in result.stderr and "--trust-agent" in result.stderr


def test_export_runs_a_stored_spec_the_user_names(tmp_path):
    """The refusal is about who named the spec: the same spec typed with --trust-agent is built."""
    from training.export import export_run

    marker = tmp_path / "owned"
    spec = marker_spec(marker)
    plant_run(tmp_path / "smoke", spec)
    with pytest.raises(ValueError):  # the empty checkpoint, read after the config was checked
        export_run(tmp_path / "smoke", tmp_path / "out.safetensors", trusted=[spec])
    assert marker.exists()


def test_a_stored_sb3_zip_spec_is_refused(tmp_path):
    from training.export import export_run

    plant_run(tmp_path / "smoke", str(tmp_path / "model.zip"))
    with pytest.raises(ValueError, match="sb3 zip"):
        export_run(tmp_path / "smoke", tmp_path / "out.safetensors")


def test_resume_never_imports_a_stored_spec(tmp_path):
    marker = tmp_path / "owned"
    plant_run(tmp_path / "runs" / "smoke", marker_spec(marker))
    result = run_cli("training.train", SMOKE, "--resume", "--runs-dir", tmp_path / "runs", "--timesteps", 2048)
    assert not marker.exists(), "the run directory's stored spec ran code"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr


def test_make_agent_refuses_code_when_asked():
    import agents

    assert agents.runs_code("timeit:timeit") and agents.runs_code("x/model.zip")
    assert not any(
        agents.runs_code(s) for s in ("random", "montecarlo:iterations=5", "mcts:iterations=5", "p.safetensors")
    )
    with pytest.raises(ValueError, match="runs code"):
        agents.make_agent("timeit:timeit", allow_code=False)
    assert agents.make_agent("greedy", allow_code=False).name == "greedy"
