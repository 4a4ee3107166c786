"""The trust rule for files (issue 23): specs stored in files are data, never imported or
unpickled; every file that comes in is checked for type and size before it is read."""

import json
import os
import subprocess
import sys

import pytest

from sorry_env.training.config import load_config

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
    result = run_cli("sorry_env.training.export", tmp_path / "runs" / "smoke", tmp_path / "out.safetensors")
    assert not marker.exists(), "the run directory's stored spec ran code"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert "imports Python code" in result.stderr and "--trust-agent" in result.stderr


def test_export_runs_a_stored_spec_the_user_names(tmp_path):
    """The refusal is about who named the spec: the same spec typed with --trust-agent is built."""
    from sorry_env.training.export import export_run

    marker = tmp_path / "owned"
    spec = marker_spec(marker)
    plant_run(tmp_path / "smoke", spec)
    with pytest.raises(ValueError):  # the empty checkpoint, read after the config was checked
        export_run(tmp_path / "smoke", tmp_path / "out.safetensors", trusted=[spec])
    assert marker.exists()


def test_a_stored_sb3_zip_spec_is_refused(tmp_path):
    from sorry_env.training.export import export_run

    plant_run(tmp_path / "smoke", str(tmp_path / "model.zip"))
    with pytest.raises(ValueError, match="sb3 zip"):
        export_run(tmp_path / "smoke", tmp_path / "out.safetensors")


def test_resume_never_imports_a_stored_spec(tmp_path):
    marker = tmp_path / "owned"
    plant_run(tmp_path / "runs" / "smoke", marker_spec(marker))
    result = run_cli(
        "sorry_env.training.train", SMOKE, "--resume", "--runs-dir", tmp_path / "runs", "--timesteps", 2048
    )
    assert not marker.exists(), "the run directory's stored spec ran code"
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr


def test_make_agent_refuses_code_when_asked():
    from sorry_env import agents

    assert agents.runs_code("timeit:timeit") and agents.runs_code("x/model.zip")
    assert not any(
        agents.runs_code(s) for s in ("random", "montecarlo:iterations=5", "mcts:iterations=5", "p.safetensors")
    )
    with pytest.raises(ValueError, match="runs code"):
        agents.make_agent("timeit:timeit", allow_code=False)
    assert agents.make_agent("greedy", allow_code=False).name == "greedy"


# Hostile files named as a replay or a policy: each is refused quickly, without being read,
# in a child process whose address space is capped at 1.5 GB (reading /dev/zero or the
# 2 GB file in full would hit the cap; a FIFO opened for reading would block until the timeout).
MEMORY_CAP = 1536 * 1024 * 1024


def hostile_files(tmp_path, suffix) -> dict:
    fifo = tmp_path / f"fifo{suffix}"
    os.mkfifo(fifo)
    sparse = tmp_path / f"sparse{suffix}"
    with open(sparse, "wb") as f:
        f.truncate(2 * 1024**3)
    return {"/dev/zero": "/dev/zero", "fifo": str(fifo), "sparse 2 GB": str(sparse)}


def capped(code: str, *args):
    def limit():
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=240,
        preexec_fn=limit,
    )


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "sparse 2 GB"])
def test_sorry_replay_refuses_hostile_files_without_reading_them(tmp_path, kind):
    path = hostile_files(tmp_path, ".json")[kind]
    result = capped("import sys; from sorry_env.replay import main; sys.exit(main(sys.argv[1:]))", path)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert ("not a regular file" if kind != "sparse 2 GB" else "more than") in result.stderr


@pytest.mark.parametrize("kind", ["/dev/zero", "fifo", "sparse 2 GB"])
@pytest.mark.parametrize("loader", ["policy", "sb3"])
def test_policy_loaders_refuse_hostile_files_without_reading_them(tmp_path, kind, loader):
    suffix = ".safetensors" if loader == "policy" else ".zip"
    path = hostile_files(tmp_path, suffix)[kind]
    if loader == "policy":
        code = "import sys; from sorry_env.agents.policy import read_metadata as read"
    else:
        code = "import sys; from sorry_env.agents.sb3_agent import read_model_data as read"
    code += "\ntry:\n    read(sys.argv[1])\nexcept ValueError as e:\n    print(e)\n    sys.exit(3)"
    result = capped(code, path)
    assert result.returncode == 3, result.stderr
    assert ("not a regular file" if kind != "sparse 2 GB" else "more than") in result.stdout


def test_a_non_policy_file_error_does_not_reveal_its_bytes(tmp_path):
    """The /etc/shadow example: the first 8 bytes read as a header length used to be printed."""
    from sorry_env.agents.policy import read_metadata

    secret = tmp_path / "secret"
    secret.write_bytes(b"root:*:20000:0:99999:7:::\n" * 25)
    with pytest.raises(ValueError) as info:
        read_metadata(str(secret))
    header_length = int.from_bytes(secret.read_bytes()[:8], "little")
    for leak in (f"{header_length:,}", str(header_length), "root:*", f"{secret.stat().st_size:,}"):
        assert leak not in str(info.value)


def test_a_replay_with_a_bad_lineup_is_refused(tmp_path):
    from sorry_env import replay as R

    record = R.record_game("hasbro2003", (0, 2), seed=1, actions=[])
    for players in ([{"agent": "x", "seat": 9}], [{"agent": "x"}], "x", [{"agent": 3, "seat": 0}] * 1):
        with pytest.raises(R.ReplayError, match="players"):
            R.replay({**record, "players": players})
    path = tmp_path / "r.json"
    R.save({**record, "players": [{"agent": "x", "seat": 9}]}, path)
    result = run_cli("sorry_env.replay", path)
    assert result.returncode == 1 and "Traceback" not in result.stderr and "players" in result.stderr


def test_a_replay_with_too_many_moves_is_refused():
    from sorry_env import replay as R

    record = R.record_game("hasbro2003", (0, 2), seed=1, actions=[])
    with pytest.raises(R.ReplayError, match="moves"):
        R.replay({**record, "moves": [{}] * (R.MAX_REPLAY_MOVES + 1)})


def test_sorry_replay_into_a_closed_pipe_exits_quietly(tmp_path):
    """`sorry-replay FILE | head -1`: the reader closes the pipe after one line."""
    from sorry_env import replay as R
    from sorry_env.board import game

    state, actions = game.new_state("hasbro2003", 2, seed=3), []
    for _ in range(300):
        if game.winner(state) is not None:
            break
        action = int(game.legal_actions(state, "hasbro2003")[0])
        actions.append(action)
        state = game.step(state, "hasbro2003", action)
    path = R.save(R.record_game("hasbro2003", game.seats_for(2), seed=3, actions=actions), tmp_path / "r.json")
    result = subprocess.run(
        f"{sys.executable} -m sorry_env.replay {path} | head -1",
        shell=True,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert len(result.stdout.splitlines()) == 1
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr


# Configs: bounded, not too deep, memory-sizing values capped before anything is built.


def write_yaml(tmp_path, text, name="c.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("module", ["sorry_env.training.train", "sorry_env.training.rllib_backend"])
def test_deeply_nested_yaml_is_a_clear_error(tmp_path, module):
    path = write_yaml(tmp_path, "name: " + "[" * 20_000 + "]" * 20_000 + "\n")
    result = run_cli(module, path, "--runs-dir", tmp_path / "runs")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert "nested too deeply" in result.stderr


@pytest.mark.parametrize(
    "text, words",
    [
        ("network: {hidden: [100000000]}", "network.hidden"),
        ("network: {value_hidden: [64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64]}", "layers"),
        ("network: {hidden: [16000, 16000]}", "parameters"),
        ("envs: 100000000000", "envs must be at most"),
        ("envs: 1024\nppo: {n_steps: 65536}", "envs * ppo.n_steps"),
        ("imitation: {chunk: 1000000000}", "imitation.chunk"),
        ("distillation: {workers: 100000}", "distillation.workers"),
        ("name: ../../../x", "name must be"),
        ("name: ..", "name must be"),
        ("name: a/b", "name must be"),
    ],
)
def test_config_caps_and_run_names(tmp_path, text, words):
    with pytest.raises(ValueError, match=words.replace("*", r"\*")):
        load_config(write_yaml(tmp_path, text))


@pytest.mark.parametrize(
    "text, words",
    [
        ("network: {hidden: [100000000]}", "network.hidden"),
        ("env_runners: {num_envs_per_env_runner: 100000000000}", "num_envs_per_env_runner"),
        ("ppo: {train_batch_size: 10000000000}", "train_batch_size"),
        ("name: ..", "name"),
        ("name: ../../../x", "name"),
    ],
)
def test_rllib_config_caps_and_run_names(tmp_path, text, words):
    from sorry_env.training import rllib_backend as rb

    with pytest.raises(ValueError, match=words):
        rb.load_config(write_yaml(tmp_path, text))


def test_a_config_that_is_not_a_regular_file_is_refused(tmp_path):
    fifo = tmp_path / "c.yaml"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        load_config(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        load_config("/dev/zero")


def test_a_replays_agent_names_are_never_built(tmp_path):
    """A lineup entry is a label: a replay naming an import spec re-plays without importing it."""
    from sorry_env import replay as R

    marker = tmp_path / "owned"
    record = R.record_game(
        "hasbro2003", (0, 2), seed=1, actions=[], players=[{"agent": marker_spec(marker), "seat": 0}]
    )
    path = R.save(record, tmp_path / "r.json")
    result = run_cli("sorry_env.replay", path)
    assert result.returncode == 0 and "timeit" in result.stdout
    assert not marker.exists()
