"""sorry-serve against slow clients: the acceptance check of issue 37.

Starts ``python -m sorry_env.agents.play.serve`` on 127.0.0.1 with its file-descriptor limit
lowered (``ulimit -n``), opens many connections that each send half a request line and then
nothing, waits, and times a fresh client's ``GET /api/layout``. Loopback only, bounded in count
and time.

    python benchmarks/serve_slow_clients.py                       # the issue's numbers: ulimit -n 1024,
                                                                  # 1,200 slow connections, 12 s before
    python benchmarks/serve_slow_clients.py --fd-limit 256 --slow 300 --wait 3 --read-seconds 1

Prints how many slow connections the server closed, the fresh client's status and time, and
the server's stderr size (no traceback flood). Exit 1 if the fresh client was not answered
within --answer-within seconds.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import resource
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
HOST = "127.0.0.1"


def start_server(fd_limit: int, read_seconds: float) -> tuple[subprocess.Popen, int]:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port = s.getsockname()[1]

    def limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, fd_limit))

    cmd = [sys.executable, "-m", "sorry_env.agents.play.serve", "--host", HOST, "--port", str(port)]
    cmd += ["--workers", "1", "--read-seconds", str(read_seconds)]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}/api/layout", timeout=5):
                return proc, port
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"the server exited: {proc.stderr.read().decode()[-500:]}") from None
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("the server did not start within 180 s")


def open_slow(port: int, count: int) -> list[socket.socket]:
    """`count` connections that each send the start of a request line and stop."""
    slow = []
    for _ in range(count):
        s = socket.socket()
        s.settimeout(5)
        try:
            s.connect((HOST, port))
            s.sendall(b"GET /api/lay")
        except OSError:
            s.close()
            continue
        slow.append(s)
    return slow


def closed_by_server(sockets: list[socket.socket]) -> int:
    """How many of `sockets` the server has closed (or answered and closed)."""
    closed = 0
    for s in sockets:
        s.setblocking(False)
        try:
            data = s.recv(4096)
            closed += 1 if data == b"" or data.startswith(b"HTTP/1.1 503") else 0
        except BlockingIOError:
            pass
        except OSError:
            closed += 1
    return closed


def fresh_client(port: int, timeout: float) -> tuple[int | str, float]:
    start = time.perf_counter()
    try:
        with urllib.request.urlopen(f"http://{HOST}:{port}/api/layout", timeout=timeout) as response:
            status: int | str = response.status
    except OSError as error:
        status = type(error).__name__
    return status, time.perf_counter() - start


def run(fd_limit: int, slow_count: int, wait: float, read_seconds: float, answer_within: float) -> dict:
    own_soft, own_hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if own_soft < slow_count + 64:  # this process holds every slow connection itself
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(own_hard, slow_count + 256), own_hard))
    proc, port = start_server(fd_limit, read_seconds)
    try:
        slow = open_slow(port, slow_count)
        time.sleep(wait)
        status, seconds = fresh_client(port, timeout=max(answer_within, 5.0))
        closed = closed_by_server(slow)
        for s in slow:
            s.close()
    finally:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    return {
        "opened": len(slow),
        "closed_by_server": closed,
        "status": status,
        "seconds": seconds,
        "stderr_bytes": len(err),
        "tracebacks": err.count(b"Traceback"),
        "ok": status == 200 and seconds <= answer_within,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fd-limit", type=int, default=1024, help="the server's ulimit -n (default 1024)")
    parser.add_argument("--slow", type=int, default=1200, help="slow connections (default 1200, at most 5000)")
    parser.add_argument("--wait", type=float, default=12.0, help="seconds between them and the fresh client")
    parser.add_argument("--read-seconds", type=float, default=10.0, help="the server's --read-seconds")
    parser.add_argument("--answer-within", type=float, default=2.0, help="the fresh client's allowance")
    args = parser.parse_args()
    if not 0 < args.slow <= 5000 or not 0 <= args.wait <= 120:
        parser.error("--slow must be 1..5000 and --wait 0..120")
    got = run(args.fd_limit, args.slow, args.wait, args.read_seconds, args.answer_within)
    print(
        f"ulimit -n {args.fd_limit}, {got['opened']} slow connections opened {args.wait:g} s before "
        f"(server --read-seconds {args.read_seconds:g}): {got['closed_by_server']} closed by the server; "
        f"fresh client: {got['status']} in {got['seconds']:.3f} s; server stderr {got['stderr_bytes']} bytes, "
        f"{got['tracebacks']} tracebacks"
    )
    sys.exit(0 if got["ok"] else 1)


if __name__ == "__main__":
    main()
