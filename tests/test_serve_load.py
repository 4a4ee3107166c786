"""sorry-serve under load, on the loopback address only: `python -m sorry_env.agents.play.serve` in a child
process on 127.0.0.1 and a free port.

- 16 clients for 30 s (games against every kind of opponent, hints, refused requests mixed
  in): no 5xx, no dropped connection, and the server's memory (its RSS plus its search
  workers') stays flat after the warm-up. The figures are printed (docs/hardening.md).
- A search keeps the server answering: ``/api/layout`` answers while a capped montecarlo
  searches, and SIGTERM stops the server promptly in the middle of one.

    python -m pytest -q -m slow -s tests/test_serve_load.py
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import pytest

pytest.importorskip("uvicorn", reason="the serve extra (uvicorn) is not installed")

HOST = "127.0.0.1"  # never another address
CLIENTS, SECONDS = 16, 30.0
OPPONENTS = ["heuristic", "random", "greedy", "expectimax:depth=2", "montecarlo:iterations=200", "trained"]
HEAVY = "montecarlo:iterations=1000,rollout_plies=10"  # the caps


def call(base: str, method: str, path: str, body=None, headers=None, timeout: float = 60) -> tuple[int, dict]:
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(
        base + path, data=data, method=method, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def start_server(*args: str) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "sorry_env.agents.play.serve", "--host", HOST, "--port", str(port), *args]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://{HOST}:{port}"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            call(base, "GET", "/api/layout", timeout=2)
            return proc, base
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    proc.kill()
    raise AssertionError("sorry-serve did not answer")


def rss_mb(pid: int) -> float:
    """Resident memory of `pid` and its children (the search workers), in MB."""
    total = 0
    pids = [pid]
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            pids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    for p in pids:
        try:
            with open(f"/proc/{p}/status") as f:
                total += next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def client_loop(base: str, seed: int, deadline: float, stats: dict, lock: threading.Lock) -> None:
    rng = random.Random(seed)

    def record(kind: str, status: int, seconds: float):
        with lock:
            stats["statuses"][status] = stats["statuses"].get(status, 0) + 1
            stats["latency"].setdefault(kind, []).append(seconds)

    def timed(kind, *a, **k):
        start = time.perf_counter()
        status, data = call(base, *a, **k)
        record(kind, status, time.perf_counter() - start)
        return status, data

    try:
        while time.monotonic() < deadline:
            rules, players = rng.choice([("hasbro2003", 2), ("hasbro2003", 4), ("hasbro2003_points", 3)])
            body = {"players": players, "rules": rules, "opponents": [rng.choice(OPPONENTS)], "seed": rng.randrange(99)}
            if body["opponents"] == ["trained"] and rules == "hasbro2003_points":
                body["opponents"] = ["heuristic"]  # no shipped 3-player points policy
            status, data = timed("create", "POST", "/api/games", body)
            assert status == 201, (body, data)
            view = data["game"]
            for k in range(rng.randrange(5, 40)):
                if view["over"] or time.monotonic() > deadline:
                    break
                if k % 7 == 3:
                    assert timed("hint", "GET", f"/api/games/{view['id']}/hint")[0] == 200
                if k % 5 == 2:  # refused requests, mixed in: each a 4xx that changes nothing
                    bad = rng.choice(
                        [
                            ("POST", f"/api/games/{view['id']}/move", b"[" * 30000, {}, 400),
                            ("POST", "/api/games", {"opponents": ["os:abort"]}, {}, 422),
                            ("POST", "/api/games", {"opponents": ["/etc/passwd"]}, {}, 422),
                            ("POST", "/api/games", {"seed": 2**40}, {}, 422),
                            ("GET", "/api/options", None, {"Host": "evil.example"}, 400),
                            ("POST", "/api/games", {}, {"Origin": "http://evil.example"}, 403),
                            ("POST", "/api/games", {}, {"Content-Type": "text/plain"}, 415),
                        ]
                    )
                    method, path, payload, headers, expected = bad
                    assert timed("refused", method, path, payload, headers)[0] == expected, bad
                move = rng.choice(view["legal"])
                status, data = timed("move", "POST", f"/api/games/{view['id']}/move", {"action": move["action"]})
                assert status == 200, data
                view = data["game"]
            assert timed("other", "GET", "/api/layout")[0] == 200
            assert timed("other", "DELETE", f"/api/games/{view['id']}")[0] == 200
    except BaseException as exc:  # noqa: BLE001 - reported by the test, not lost in a thread
        with lock:
            stats["errors"].append(f"{type(exc).__name__}: {exc}"[:300])


@pytest.mark.slow
def test_sixteen_clients_for_thirty_seconds_get_no_5xx_and_memory_stays_flat():
    proc, base = start_server("--max-games", "64", "--workers", "2")
    try:
        stats = {"statuses": {}, "latency": {}, "errors": []}
        lock = threading.Lock()
        start = time.monotonic()
        deadline = start + SECONDS
        threads = [
            threading.Thread(target=client_loop, args=(base, k, deadline, stats, lock), daemon=True)
            for k in range(CLIENTS)
        ]
        for t in threads:
            t.start()
        samples = []  # (seconds since start, RSS MB)
        while any(t.is_alive() for t in threads):
            samples.append((time.monotonic() - start, rss_mb(proc.pid)))
            time.sleep(1)
            assert time.monotonic() < deadline + 120, "clients did not finish"
        assert proc.poll() is None, "the server died"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    moves = sorted(stats["latency"].get("move", []))
    requests = sum(stats["statuses"].values())
    third = [m for t, m in samples if SECONDS / 3 <= t < 2 * SECONDS / 3]
    last = [m for t, m in samples if t >= 2 * SECONDS / 3]
    print(
        f"\n{CLIENTS} clients, {SECONDS:g} s: {requests} requests, statuses {dict(sorted(stats['statuses'].items()))}, "
        f"{len(moves)} moves: latency median {statistics.median(moves) * 1000:.0f} ms, "
        f"p95 {moves[int(0.95 * (len(moves) - 1))] * 1000:.0f} ms, max {moves[-1] * 1000:.0f} ms; "
        f"RSS (server + workers) first {samples[0][1]:.0f} MB, middle third max {max(third):.0f} MB, "
        f"last third max {max(last):.0f} MB"
    )
    assert not stats["errors"], stats["errors"][:5]
    assert not [s for s in stats["statuses"] if s >= 500], stats["statuses"]
    assert len(moves) > 100
    assert max(last) <= 1.15 * max(third) + 20, samples  # flat after the warm-up


@pytest.mark.slow
def test_the_server_answers_while_a_search_runs_and_sigterm_stops_it_promptly():
    proc, base = start_server("--workers", "1", "--move-seconds", "60")
    try:
        body = {"players": 4, "rules": "hasbro2003_points", "opponents": [HEAVY], "seed": 5}
        status, data = call(base, "POST", "/api/games", body)
        assert status == 201, data
        view = data["game"]
        done = {}

        def move(moves: int = 1):
            """`moves` moves in a row (each followed by three searches)."""
            start = time.perf_counter()
            game = view
            try:
                for _ in range(moves):
                    action = {"action": game["legal"][0]["action"]}
                    done["answer"] = call(base, "POST", f"/api/games/{game['id']}/move", action)
                    game = done["answer"][1]["game"]
                    if game["over"]:
                        break
            except (urllib.error.URLError, ConnectionError, ValueError) as exc:  # the server stopped under it
                done["answer"] = (None, str(exc))
            done["seconds"] = time.perf_counter() - start

        worker = threading.Thread(target=move, args=(4,), daemon=True)
        worker.start()
        layout = []
        while worker.is_alive():
            start = time.perf_counter()
            assert call(base, "GET", "/api/layout", timeout=30)[0] == 200
            layout.append(time.perf_counter() - start)
            time.sleep(0.05)
        assert done["answer"][0] == 200, done
        print(
            f"\n4 moves against 3 x {HEAVY}: {done['seconds']:.2f} s (with the worker's start); "
            f"/api/layout answered {len(layout)} times meanwhile, slowest {max(layout) * 1000:.0f} ms"
        )
        assert done["seconds"] > 1.0 and len(layout) > 10
        assert max(layout) < 0.5  # the event loop never waited for a search
        # SIGTERM in the middle of the next search: the server exits within seconds
        view = done["answer"][1]["game"]
        threading.Thread(target=move, daemon=True).start()
        time.sleep(0.3)
        stop = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=15)
        print(f"SIGTERM to exit: {time.monotonic() - stop:.2f} s")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
