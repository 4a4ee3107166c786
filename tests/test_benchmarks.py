"""The speed scripts in benchmarks/ run end to end and refuse bad settings before any work.
Their figures are never asserted: speed is read from the scripts' output, not timed in tests.
The scripts run in this process (their `main()` with a patched argv): a subprocess per case
would spend most of its time importing and loading compiled code."""

import functools
import importlib.util
import pathlib
import re
import sys

import pytest

BENCHMARKS = pathlib.Path(__file__).parent.parent / "benchmarks"


@functools.cache  # one module per script: bench_engine's compiled function is not cached on disk
def load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(monkeypatch, capsys, script, args):
    """(exit code, stdout, stderr) of `python benchmarks/<script>.py ARGS`."""
    monkeypatch.setattr(sys, "argv", [f"{script}.py", *args])
    code = 0
    try:
        load(script).main()
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    "script, args, expected",
    [
        ("bench_engine", ["--games", "20", "--players", "2"], r"hasbro2003, 2 players: 20 games, \d+ moves in "),
        # a command that compiles nothing: the copy with empty caches, the run and its report
        ("bench_cold_compile", ["--", "-c", "import sorry_env"], r"cold 1: [\d.]+ s wall, [\d.]+ CPU-s \(exit 0\)"),
        ("bench_env", ["--steps", "400"], r"sorry env\(\), 4 players +[\d,]+ steps/s"),
        ("bench_openspiel", ["--seconds", "0.2"], r"raw_env / pyspiel: [\d.]+x bare, [\d.]+x with observations"),
        (
            "bench_search",
            ["--games", "1", "--agents", "expectimax:depth=1", "mcts:iterations=8"],
            r"mcts:iterations=8, moves with a choice: \d+ moves, mean [\d.]+ ms, p99 [\d.]+ ms",
        ),
        (
            "bench_trainer",
            ["--configs", "configs/smoke.yaml", "--paths", "gym+dense", "batched@16", "--rollouts", "1"],
            r"batched@16 / gym\+dense \(CPU, medians\): [\d.]+x",
        ),
    ],
)
def test_speed_scripts_run_end_to_end(monkeypatch, capsys, script, args, expected):
    code, out, err = run(monkeypatch, capsys, script, args)
    assert code == 0, err
    assert re.search(expected, out), out


@pytest.mark.parametrize(
    "script, args, message",
    [
        ("bench_engine", ["--games", "0"], "--games must be >= 1"),
        ("bench_engine", ["--rules", "hasbro2003_teams", "--players", "2"], "team rules"),
        ("bench_env", ["--steps", "0"], "--steps must be >= 4"),
        ("bench_openspiel", ["--seconds", "0"], "--seconds must be positive"),
        ("bench_search", ["--games", "0"], "--games must be >= 1"),
        ("bench_search", ["--agents", "mcts:iterations=x"], "must be an integer"),
        ("bench_search", ["--rules", "nosuchrules"], "unknown rules preset"),
        ("bench_engine_ab", ["--base", "HEAD", "--games", "0"], "--games and --repeats must be >= 1"),
        ("bench_engine_ab", ["--base", "no-such-revision-x"], "git archive no-such-revision-x"),
        ("bench_cold_compile", ["--repeats", "0"], "--repeats must be at least 1"),
        ("bench_cold_compile", ["--rev", "no-such-revision-x"], "git archive no-such-revision-x"),
        ("bench_trainer", ["--rollouts", "0"], "--rollouts must be >= 1"),
        ("bench_trainer", ["--paths", "compiled"], "unknown path 'compiled'"),
        ("bench_trainer", ["--configs", "configs/nosuch.yaml"], "configs/nosuch.yaml"),
    ],
)
def test_speed_scripts_refuse_bad_settings(monkeypatch, capsys, script, args, message):
    code, out, err = run(monkeypatch, capsys, script, args)
    assert code == 2 and message in err, err
    assert out == ""


@pytest.mark.slow
def test_engine_ab_compares_with_an_older_commit(monkeypatch, capsys):
    code, out, err = run(monkeypatch, capsys, "bench_engine_ab", ["--base", "HEAD", "--games", "20", "--repeats", "1"])
    assert code == 0, err
    assert re.search(r"best of 1: HEAD [\d,]+ moves/s, this tree [\d,]+ moves/s, ratio [\d.]+", out), out
