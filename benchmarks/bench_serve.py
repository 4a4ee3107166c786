"""Move latency of sorry-serve with several games at once: a bounded local load test.

Starts ``sorry-serve`` (``python -m sorry_env.agents.play.serve``) on 127.0.0.1 and a free port, then plays
``--games`` games at once, each from its own thread and HTTP connection, as a person would:
ask for the game, pick a random legal move, post it, and so on. A move's latency is the
time from sending ``POST /api/games/{id}/move`` to having its answer, which includes the
opponents' replies. Each game stops at its end or after ``--moves`` moves, the whole run
after ``--seconds``; then the server is stopped. Only the loopback address is ever used.

    python benchmarks/bench_serve.py                     # 8 games at once vs the heuristic
    python benchmarks/bench_serve.py --games 1           # the same, one game alone
    python benchmarks/bench_serve.py --opponent "expectimax:depth=2" --moves 40

Prints one line per phase: games, moves, median / p95 / max latency in ms, moves per second.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

HOST = "127.0.0.1"  # the load test never leaves this machine


def call(base: str, method: str, path: str, body: dict | None = None, timeout: float = 60) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read())


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def start_server(port: int, timeout: float = 120) -> subprocess.Popen:
    """sorry-serve on HOST:port in a child process, once it answers."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sorry_env.agents.play.serve", "--host", HOST, "--port", str(port), "--max-games", "64"],
        env=env,
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"sorry-serve exited with code {proc.returncode} before answering")
        try:
            call(f"http://{HOST}:{port}", "GET", "/api/layout", timeout=2)
            return proc
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    proc.terminate()
    raise SystemExit(f"sorry-serve did not answer within {timeout:.0f} s")


def play(base: str, seed: int, opponent: str, rules: str, max_moves: int, deadline: float, out: list, errors: list):
    """One game of random legal moves; each move's latency (seconds) appended to `out`."""
    rng = random.Random(seed)
    try:
        view = call(base, "POST", "/api/games", {"players": 2, "rules": rules, "opponents": [opponent], "seed": seed})[
            "game"
        ]
        for _ in range(max_moves):
            if view["over"] or time.monotonic() > deadline:
                break
            move = rng.choice(view["legal"])
            start = time.perf_counter()
            view = call(
                base, "POST", f"/api/games/{view['id']}/move", {"action": move["action"], "version": view["version"]}
            )["game"]
            out.append(time.perf_counter() - start)
        call(base, "DELETE", f"/api/games/{view['id']}")
    except (OSError, ValueError, KeyError) as exc:  # reported after the run; the other games go on
        errors.append(f"game {seed}: {type(exc).__name__}: {exc}")


def phase(base: str, games: int, args) -> tuple[list, float, list]:
    """`games` games at once; (latencies, wall seconds, errors)."""
    latencies, errors = [], []
    deadline = time.monotonic() + args.seconds
    threads = [
        threading.Thread(
            target=play, args=(base, args.seed + k, args.opponent, args.rules, args.moves, deadline, latencies, errors)
        )
        for k in range(games)
    ]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=args.seconds + 120)
    return latencies, time.perf_counter() - start, errors


def report(label: str, games: int, latencies: list, wall: float) -> str:
    ms = sorted(x * 1000 for x in latencies)
    if not ms:
        return f"{label}: {games} games, no moves"
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{label}: {games} games, {len(ms)} moves in {wall:.1f} s; move latency median {statistics.median(ms):.1f} "
        f"ms, p95 {p95:.1f} ms, max {ms[-1]:.1f} ms; {len(ms) / wall:.0f} moves/s"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=8, help="games played at once")
    p.add_argument("--moves", type=int, default=150, help="moves per game at most (bounds the run)")
    p.add_argument("--seconds", type=float, default=90, help="the run stops after this long")
    p.add_argument("--opponent", default="heuristic", help="agent spec of every game's opponent")
    p.add_argument("--rules", default="hasbro2003")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--alone", action="store_true", help="first play one game alone, for comparison")
    args = p.parse_args(argv)
    if not 1 <= args.games <= 32 or args.moves < 1 or not 0 < args.seconds <= 600:
        p.error("--games must be 1..32, --moves at least 1 and --seconds in (0, 600]")
    port = free_port()
    server = start_server(port)
    base = f"http://{HOST}:{port}"
    try:
        # One move first so that compiling and loading are not timed.
        warm = call(base, "POST", "/api/games", {"players": 2, "rules": args.rules, "opponents": [args.opponent]})
        call(base, "POST", f"/api/games/{warm['game']['id']}/move", {"action": warm["game"]["legal"][0]["action"]})
        failed = []
        if args.alone:
            lat, wall, errors = phase(base, 1, args)
            print(report("alone", 1, lat, wall), flush=True)
            failed += errors
        lat, wall, errors = phase(base, args.games, args)
        print(report("at once", args.games, lat, wall), flush=True)
        failed += errors
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
    for line in failed:
        print("error:", line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
