"""Command-line mistakes and interruptions end in a one-line message and a nonzero exit, never
a traceback; output folders are checked before any game is played."""

import json
import signal
import subprocess
import sys
import time

import pytest


def run(module, *args, stdin=b""):
    result = subprocess.run(
        [sys.executable, "-m", module, *map(str, args)], input=stdin, capture_output=True, timeout=300, check=False
    )
    return result.returncode, result.stdout.decode(errors="replace"), result.stderr.decode(errors="replace")


def assert_message(code, err, expected=None):
    assert code != 0 and "Traceback" not in err, err[-3000:]
    if expected:
        assert expected in err, err[-3000:]


def test_play_answers_a_huge_number_and_non_utf8_input():
    code, out, err = run("sorry_env.agents.play", "--opponents", "random", stdin=b"9" * 5000 + b"\n\xff\xfe\nq\n")
    assert code == 1 and "Traceback" not in err, err[-3000:]
    assert out.count("is not one of the moves") == 2 and "Game abandoned: you quit." in out


def _default_sigint() -> None:
    """In the child before exec: SIGINT back to its default. A shell starts a background job
    (`pytest ... &`) with SIGINT ignored, children inherit that, and Python then installs no
    KeyboardInterrupt handler, so the Ctrl-C below would go unheard."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_a_child_hears_ctrl_c_even_when_the_suite_ignores_it():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as in a background job
    try:
        probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"]
        inherited = subprocess.run(probe, capture_output=True, text=True, check=True).stdout.strip()
        restored = subprocess.run(
            probe, capture_output=True, text=True, check=True, preexec_fn=_default_sigint
        ).stdout.strip()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (inherited, restored) == ("True", "False")


def test_play_interrupted_with_ctrl_c():
    proc = subprocess.Popen(
        [sys.executable, "-m", "sorry_env.agents.play", "--opponents", "random"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=_default_sigint,
    )
    deadline = time.time() + 240
    seen = b""
    while b"Your move" not in seen and time.time() < deadline:  # wait for the first prompt
        chunk = proc.stdout.read1(4096)
        if not chunk:
            break
        seen += chunk
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    err = err.decode(errors="replace")
    assert proc.returncode != 0 and "Traceback" not in err, err[-3000:]
    assert "interrupted" in (seen + out).decode(errors="replace") + err


def test_eval_checks_its_output_folder_before_any_game(tmp_path):
    (tmp_path / "a-file").write_text("x")
    started = time.perf_counter()
    code, out, err = run(
        "sorry_env.agents.arena.cli",
        "heuristic",
        "random",
        "--games",
        "4000",
        "--workers",
        "1",
        "--out",
        tmp_path / "a-file" / "out",
        "--no-progress",
    )
    assert_message(code, err, "--out")
    assert "games in" not in out and time.perf_counter() - started < 120


@pytest.mark.ci_slow  # over 10 s: CI runs it after the README's test command
def test_export_of_a_truncated_checkpoint_or_to_a_folder_is_a_message(tmp_path):
    from test_checkpoint import plant_pickle_checkpoint

    run_dir = tmp_path / "run"
    plant_pickle_checkpoint(run_dir, tmp_path / "owned")
    (run_dir / "checkpoint.zip").unlink()
    (run_dir / "checkpoint.safetensors").write_bytes(b'\x10\x00\x00\x00\x00\x00\x00\x00{"a":')
    code, _, err = run("sorry_env.training.export", run_dir, tmp_path / "out.safetensors")
    assert_message(code, err, "checkpoint.safetensors")
    (run_dir / "run_state.json").write_text(json.dumps({"config": "nonsense"}))
    code, _, err = run("sorry_env.training.export", run_dir, tmp_path / "out.safetensors")
    assert_message(code, err, "run_state.json")


@pytest.mark.parametrize(
    "args, expected",
    [
        (["heuristic", "mcts:iterations=99999999999999999999999"], "iterations"),
        (["heuristic", "random", "--games", "2", "--max-turns", "0"], "max_turns"),
    ],
)
def test_eval_setting_mistakes_are_messages(args, expected):
    code, _, err = run(
        "sorry_env.agents.arena.cli", *args, "--workers", "1", "--no-progress", "--out", "/tmp/unused-eval"
    )
    assert_message(code, err, expected)
