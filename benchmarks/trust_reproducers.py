"""The hostile inputs of issue 37 ("Trust, second round"), each run through its command under a
memory cap: every one must end with a non-zero exit, no traceback and one short error line,
long before the allocation it used to make.

    python benchmarks/trust_reproducers.py                 # every reproducer, under ulimit -v 4000000
    python benchmarks/trust_reproducers.py --only yaml_alias_bomb policy_hidden_bomb

For each: exit code, wall seconds, the child's peak RSS (``wait4``) and its last stderr line.
tests/test_trust_round2.py runs the same builders under a tighter cap and checks the messages.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import signal
import struct
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
POLICY = ROOT / "checkpoints" / "hasbro2013-2p.safetensors"


def _other_game() -> tuple[str, pathlib.Path]:
    """A registered game other than the board game, and its shipped 2-player policy file
    (through the registry: no game is named outside its folder)."""
    sys.path.insert(0, str(ROOT))
    from sorry_env import games

    game_id = games.other_builtin_game_types()[0].id
    return game_id, ROOT / "checkpoints" / f"{game_id}-2p.safetensors"


MEMORY_CAP_KB = 4_000_000  # ulimit -v 4000000, as the issue asks


def _write_safetensors(path: pathlib.Path, metadata: dict[str, str], tensors: dict | None = None) -> None:
    """A safetensors file of only a header (and zero-length tensors): what a crafted file holds."""
    header = {"__metadata__": metadata, **(tensors or {})}
    raw = json.dumps(header, separators=(",", ":")).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def _policy_metadata(source: pathlib.Path) -> dict[str, str]:
    size = struct.unpack("<Q", source.read_bytes()[:8])[0]
    return json.loads(source.read_bytes()[8 : 8 + size])["__metadata__"]


def _module(name: str, *args) -> list[str]:
    return [sys.executable, "-m", name, *map(str, args)]


def policy_hidden_bomb(tmp: pathlib.Path) -> tuple[list[str], str]:
    """A 14 MB policy file whose network.hidden lists 7,000,000 widths (sorry-eval)."""
    meta = _policy_metadata(POLICY)
    inner = json.loads(meta["sorry_policy"])
    inner["network"]["hidden"] = [1] * 7_000_000
    meta["sorry_policy"] = json.dumps(inner, separators=(",", ":"))
    path = tmp / "bomb.safetensors"
    _write_safetensors(path, meta)
    return _module("sorry_env.agents.arena.cli", path, "random", "--games", "1", "--no-progress"), "16 layers"


def policy_parameter_bomb(tmp: pathlib.Path) -> tuple[list[str], str]:
    """16 layers of 16,384 units: within each cap, 4 billion parameters together (sorry-eval)."""
    meta = _policy_metadata(POLICY)
    inner = json.loads(meta["sorry_policy"])
    inner["network"]["hidden"] = [16_384] * 16
    meta["sorry_policy"] = json.dumps(inner)
    path = tmp / "wide.safetensors"
    _write_safetensors(path, meta)
    return _module("sorry_env.agents.arena.cli", path, "random", "--games", "1", "--no-progress"), "parameters"


def game_policy_hidden_bomb(tmp: pathlib.Path) -> tuple[list[str], str]:
    """Another game's policy file with 7,000,000 widths (sorry-eval --game ID)."""
    game_id, game_policy = _other_game()
    meta = _policy_metadata(game_policy)
    key = next(iter(meta))
    inner = json.loads(meta[key])
    inner["network"]["hidden"] = [1] * 7_000_000
    meta[key] = json.dumps(inner, separators=(",", ":"))
    path = tmp / "other-game-bomb.safetensors"
    _write_safetensors(path, meta)
    argv = _module("sorry_env.agents.arena.cli", "--game", game_id, path, "random", "--games", "1", "--no-progress")
    return argv, "16 layers"


def selfplay_network_8192(tmp: pathlib.Path) -> tuple[list[str], str]:
    """A 320-byte sorry-bench selfplay_ppo network file asking for hidden: 8192."""
    record = {"algorithm": "selfplay_ppo", "rules": "hasbro2003", "players": 2, "hidden": 8192}
    path = tmp / "net.safetensors"
    _write_safetensors(path, {"sorry_bench_game": json.dumps(record)})
    spec = f"sorry_env.training.bench.selfplay_ppo:agent:path={path}"
    return _module("sorry_env.agents.arena.cli", spec, "random", "--games", "1", "--no-progress"), "parameters"


def yaml_alias_bomb(tmp: pathlib.Path) -> tuple[list[str], str]:
    """Nine levels of nine aliases: 9**9 strings once expanded (sorry-train)."""
    levels = ["&a [" + ", ".join(["lol"] * 9) + "]"]
    for prev, name in zip("abcdefg", "bcdefgh"):
        levels.append(f"&{name} [" + ", ".join([f"*{prev}"] * 9) + "]")
    levels.append("[" + ", ".join(["*h"] * 9) + "]")
    path = tmp / "bomb.yaml"
    path.write_text("name: [" + ", ".join(levels) + "]\n")
    return _module("sorry_env.training.train", path, "--runs-dir", tmp / "runs"), "alias"


def yaml_duplicate_key(tmp: pathlib.Path) -> tuple[list[str], str]:
    path = tmp / "dup.yaml"
    path.write_text("name: dup\nseed: 1\nseed: 2\n")
    return _module("sorry_env.training.train", path, "--runs-dir", tmp / "runs"), "given twice"


def yaml_huge_seed(tmp: pathlib.Path) -> tuple[list[str], str]:
    path = tmp / "seed.yaml"
    path.write_text("name: bigseed\nseed: 4294967296\n")
    return _module("sorry_env.training.train", path, "--runs-dir", tmp / "runs"), "seed must be at most"


def bench_report_escape(tmp: pathlib.Path) -> tuple[list[str], str]:
    """A result whose task climbs out of the report folder (sorry-bench report)."""
    return _bench_report(tmp, {"task": "x/../../../../../../../../tmp/OUTSIDE"}), "plain name"


def bench_report_seed_digits(tmp: pathlib.Path) -> tuple[list[str], str]:
    return _bench_report(tmp, {"seed": 10**400}), "seed"


def bench_report_mathtext(tmp: pathlib.Path) -> tuple[list[str], str]:
    return _bench_report(tmp, {"task": "$" + "{" * 500 + "$"}), "plain name"


def bench_report_deep_json(tmp: pathlib.Path) -> tuple[list[str], str]:
    run = tmp / "runs" / "t" / "a" / "seed-0"
    run.mkdir(parents=True)
    (run / "result.json").write_text("[" * 200_000 + "]" * 200_000)
    return _module("sorry_env.training.bench.cli", "report", "--runs-dir", tmp / "runs", "--out", tmp / "out"), "JSON"


def bench_report_csv_field(tmp: pathlib.Path) -> tuple[list[str], str]:
    argv = _bench_report(tmp, {})
    curve = next((tmp / "runs").glob("*/*/seed-*")) / "curve.csv"
    curve.write_text("steps,wall_seconds,wins,games,win_rate,ci_low,ci_high,normalized\n" + "1" * 200_000 + "\n")
    return argv, "curve file"


def bench_score_seed_digits(tmp: pathlib.Path) -> tuple[list[str], str]:
    """sorry-bench score --out a folder whose earlier scores.json holds a 400-digit count."""
    out = tmp / "score"
    out.mkdir()
    row = {"task": "2p-heuristic-v1", "agent": "random", "wins": 1, "games": 10**400, "win_rate": 0.5}
    row.update(ci_low=0.1, ci_high=0.9)
    (out / "scores.json").write_text(json.dumps([row]))
    argv = _module("sorry_env.training.bench.cli", "score", "random", "--task", "2p-heuristic", "--out", out)
    return argv + ["--games", "2"], "games"


def _bench_report(tmp: pathlib.Path, changes: dict) -> list[str]:
    result = {
        "task": "2p-heuristic-v1",
        "algorithm": "dqn",
        "cpu": "test",
        "seed": 0,
        "steps": 10,
        "budget": 10,
        "train_seconds": 1.0,
        "score": {"wins": 1, "games": 2, "win_rate": 0.5, "ci_low": 0.1, "ci_high": 0.9, "standard": True},
    }
    result.update(changes)
    run = tmp / "runs" / "t" / "a" / "seed-0"
    run.mkdir(parents=True)
    (run / "result.json").write_text(json.dumps(result))
    rows = "steps,wall_seconds,wins,games,win_rate,ci_low,ci_high,normalized\n10,1,1,2,0.5,0.1,0.9,\n"
    (run / "curve.csv").write_text(rows)
    return _module("sorry_env.training.bench.cli", "report", "--runs-dir", tmp / "runs", "--out", tmp / "out")


def replay_proc_mem(tmp: pathlib.Path) -> tuple[list[str], str]:
    return _module("sorry_env.replay", "/proc/self/mem"), "cannot be read"


def expit_without_ray(tmp: pathlib.Path) -> tuple[list[str], str]:
    """sorry-expit where Ray cannot be imported (sys.modules["ray"] = None hides it)."""
    code = "import sys; sys.modules['ray'] = None; from sorry_env.training.expert_iteration import main; main()"
    return [sys.executable, "-c", code, "configs/expit-smoke.yaml"], "rllib"


def sb3_partial_tag(tmp: pathlib.Path) -> tuple[list[str], str]:
    """An sb3 zip whose observation space names the env but records no rules."""
    import zipfile

    path = tmp / "model.zip"
    data = {"observation_space": {"sorry_game": {"env": "sorry_env/Sorry-v1"}}}
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("data", json.dumps(data))
    return _module("sorry_env.agents.arena.cli", path, "random", "--games", "1", "--no-progress"), "incomplete"


def tournament_json(tmp: pathlib.Path) -> tuple[list[str], str]:
    """sorry-export --tournament with a 198 MB JSON file of empty lists (sparse would be refused
    as well; this one is real bytes, so the cap, not the type check, refuses it)."""
    path = tmp / "results.json"
    with open(path, "w") as f:
        f.write("[" + "[]," * (66 * 1024 * 1024) + "[]]")
    sys.path.insert(0, str(ROOT))
    from sorry_env.training.config import load_config

    run = tmp / "run"
    run.mkdir()
    state = {"config": load_config(ROOT / "configs" / "smoke.yaml"), "evaluations": [], "imitation": {}}
    (run / "run_state.json").write_text(json.dumps(state))
    (run / "checkpoint.safetensors").write_bytes(b"")  # never read: the tournament file is refused first
    return _module("sorry_env.training.export", run, tmp / "out.safetensors", "--tournament", path), "MB"


REPRODUCERS = {
    f.__name__: f
    for f in (
        policy_hidden_bomb,
        policy_parameter_bomb,
        game_policy_hidden_bomb,
        selfplay_network_8192,
        yaml_alias_bomb,
        yaml_duplicate_key,
        yaml_huge_seed,
        bench_report_escape,
        bench_report_seed_digits,
        bench_report_mathtext,
        bench_report_deep_json,
        bench_report_csv_field,
        bench_score_seed_digits,
        replay_proc_mem,
        expit_without_ray,
        sb3_partial_tag,
        tournament_json,
    )
}


# Runs one command under an address-space cap and writes "<peak RSS KB> <wait status>" to a file.
# A child forked straight from a large process (a pytest worker of a long run) would inherit its
# RSS high-water mark at exec, so the command is forked from this small launcher instead: its
# peak is its own.
_LAUNCHER = """
import os, resource, sys
cap, out = int(sys.argv[1]), sys.argv[2]
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[3], sys.argv[3:])
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(f"{usage.ru_maxrss} {status}")
"""


def run_capped(argv: list[str], cap_kb: int, timeout: float = 120.0) -> dict:
    """Run `argv` (from the repository root, this tree first on the path) with its address space
    capped at `cap_kb` KB; its exit code, wall seconds, peak RSS (MB) and stderr."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "peak")
        launcher = [sys.executable, "-c", _LAUNCHER, str(cap_kb * 1024), report, *argv]
        proc = subprocess.Popen(
            launcher, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, env=env, start_new_session=True
        )
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the launcher and the command it runs
            proc.wait()
        try:
            with open(report) as f:
                peak_kb, status = (int(word) for word in f.read().split())
            returncode = os.waitstatus_to_exitcode(status)
        except (OSError, ValueError):  # killed at the deadline before it could report
            peak_kb, returncode = 0, -signal.SIGKILL
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return {
        "returncode": returncode,
        "seconds": time.perf_counter() - start,
        "peak_mb": peak_kb / 1024,
        "stderr": stderr,
    }


def error_lines(stderr: str) -> list[str]:
    """The lines of `stderr` after argparse's usage block (``usage: ...`` up to the line with
    ``error:``), which a usage error prints before its one error line."""
    lines = stderr.strip().splitlines()
    if lines and lines[0].startswith("usage:"):
        lines = lines[next((k for k, line in enumerate(lines) if ": error: " in line), 0) :]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=sorted(REPRODUCERS), help="run these only")
    parser.add_argument("--cap-kb", type=int, default=MEMORY_CAP_KB, help="address-space cap (ulimit -v), KB")
    args = parser.parse_args()
    failed = 0
    for name in args.only or REPRODUCERS:
        with tempfile.TemporaryDirectory() as tmp:
            argv, words = REPRODUCERS[name](pathlib.Path(tmp))
            got = run_capped(argv, args.cap_kb)
        lines = error_lines(got["stderr"])
        ok = (
            got["returncode"] not in (0, None)
            and "Traceback" not in got["stderr"]
            and len(lines) == 1
            and len(lines[0]) <= 400
            and words.lower() in lines[0].lower()
            and got["seconds"] < 30
            and got["peak_mb"] < 1536
        )
        failed += not ok
        print(
            f"{'ok  ' if ok else 'FAIL'} {name}: exit {got['returncode']}, {got['seconds']:.1f} s, "
            f"peak RSS {got['peak_mb']:.0f} MB, {len(lines)} stderr line(s): {lines[-1][:160] if lines else ''}",
            flush=True,
        )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
