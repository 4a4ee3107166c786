"""Search moves off the server's process, each under a time budget.

A search agent's move is one compiled call that holds the GIL for its whole length, so run in
a thread it would stop the event loop (static files, ``/api/layout``) and the SIGTERM handler
until it ended. :class:`MovePool` runs such moves in worker processes (spawned, so no lock
of the server's threads is copied), one move per worker at a time. A request thread waits
for its answer with the GIL free; when the budget runs out (waiting for a free worker
included) the worker is killed and replaced, and :class:`RemoteAgent` plays the heuristic's
move instead and says so.

A worker receives only data the server built: the name of a registered agent, its capped
settings, a seed and the public :class:`agents.Turn`. It never sees a client's text.
"""

from __future__ import annotations

import multiprocessing
import queue
import sys
import threading
import time
from collections import OrderedDict

import numpy as np

from sorry_env.agents import Agent, agents_of_game

from ..prompt import first_offered

# Agents a worker keeps built, by (game, name, settings): each distinct setting of a search agent
# holds its own tables (azsearch about 0.8 MB), so the cache is bounded, least recently used out.
MAX_CACHED_AGENTS = 32
STARTUP_SECONDS = 120.0  # a fresh worker imports the agents and loads their compiled code


def _maker(game_id: str, name: str):
    """The registered agent class (or maker) `name` of game `game_id` (agents.agents_of_game:
    the registered makers only, so a job names one of them)."""
    return agents_of_game(game_id)[name]


def _worker(conn) -> None:
    """A worker process: answer (agent name, settings, seed, turn, game id) jobs with ("ok",
    action) or ("error", message) until the pipe closes."""
    made: OrderedDict[tuple, Agent] = OrderedDict()  # the most recently used agents, at most MAX_CACHED_AGENTS
    conn.send(("ready", None))
    while True:
        try:
            name, settings, seed, turn, game_id = conn.recv()
        except (EOFError, OSError):
            return
        try:
            key = (game_id, name, settings)
            if key not in made:
                made[key] = _maker(game_id, name)(**dict(settings))
                if len(made) > MAX_CACHED_AGENTS:
                    made.popitem(last=False)
            made.move_to_end(key)
            agent = made[key]
            agent.reset(seed)  # the move depends on the game's seed only, not on the worker
            conn.send(("ok", int(agent.act(turn))))
        except Exception as exc:  # a failing agent is an answer, not a dead worker
            conn.send(("error", f"{type(exc).__name__}: {exc}"[:300]))


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(child,), daemon=True, name="sorry-serve-search")
        self.process.start()
        child.close()
        self._stop_lock = threading.Lock()

    def wait_ready(self, seconds: float) -> bool:
        try:
            return self.conn.poll(seconds) and self.conn.recv()[0] == "ready"
        except (EOFError, OSError):
            return False

    def stop(self) -> None:
        with self._stop_lock:  # (idempotent: a second call finds the pipe closed)
            if self.conn.closed:
                return
            self.process.kill()
            self.process.join(timeout=5)
            self.conn.close()


class MovePool:
    """`workers` search processes, started on first use; each move waits at most `budget`
    seconds (the first, while the workers start, at most STARTUP_SECONDS)."""

    def __init__(self, workers: int = 2, budget: float = 5.0):
        if not (isinstance(workers, int) and 1 <= workers <= 64):
            raise ValueError(f"workers must be an integer from 1 to 64, got {workers!r}")
        if not (isinstance(budget, (int, float)) and 0 < budget <= 600):
            raise ValueError(f"the move budget must be from 0 to 600 seconds, got {budget!r}")
        self.workers, self.budget = workers, float(budget)
        self._ctx = multiprocessing.get_context("spawn")
        self._idle: queue.Queue[_Worker] = queue.Queue()
        self._lock = threading.Lock()
        self._started = 0  # workers started (or being started) and not stopped
        self._ready = threading.Event()  # set once a worker has answered
        self._closed = False
        self._live: set[_Worker] = set()

    def _spawn(self) -> None:
        """Start one worker and queue it when it is ready (in its own thread)."""
        worker = _Worker(self._ctx)
        with self._lock:
            self._live.add(worker)
        if worker.wait_ready(STARTUP_SECONDS) and not self._closed:
            self._ready.set()
            self._idle.put(worker)
            return
        self._retire(worker)
        if not self._closed:  # (stopped on purpose when the server closes)
            print("sorry-serve: a search worker did not start", file=sys.stderr, flush=True)

    def _retire(self, worker: _Worker) -> None:
        # Whoever takes a worker out of `_live` stops it, once: `close` may have taken it
        # already, and closing a pipe twice from two threads can close a reused descriptor.
        with self._lock:
            owned = worker in self._live
            self._live.discard(worker)
            self._started -= 1
        if owned:
            worker.stop()

    def _fill(self) -> None:
        with self._lock:
            missing = 0 if self._closed else self.workers - self._started
            self._started += missing
        for _ in range(missing):
            threading.Thread(target=self._spawn, daemon=True, name="sorry-serve-spawn").start()

    def choose(self, name: str, settings: tuple, seed: int, turn, game_id: str) -> tuple[int | None, str | None]:
        """(action, None) from a worker, or (None, why) when the budget ran out or the agent
        failed. `name` is an agent of registered game `game_id`."""
        if self._closed:
            return None, "the server is stopping"
        self._fill()
        wait = self.budget if self._ready.is_set() else STARTUP_SECONDS
        deadline = time.monotonic() + wait
        try:
            worker = self._idle.get(timeout=wait)
        except queue.Empty:
            return None, f"no search worker was free within {wait:g} s"
        deadline = min(deadline, time.monotonic() + self.budget)  # after a start-up wait: the budget from now
        try:
            worker.conn.send((name, settings, seed, turn, game_id))
            if worker.conn.poll(max(0.0, deadline - time.monotonic())):
                status, value = worker.conn.recv()
                self._idle.put(worker)
                return (value, None) if status == "ok" else (None, f"the agent failed ({value})")
            why = (
                f"the search ran out of its {self.budget:g} s budget"  # still searching: its answer would come too late
            )
        except (EOFError, OSError) as exc:
            why = f"the search worker stopped ({type(exc).__name__})"
        self._retire(worker)
        self._fill()
        return None, why

    def close(self) -> None:
        """Stop every worker (a move waiting on one gets its fallback at once)."""
        self._closed = True
        with self._lock:
            live = list(self._live)
            self._live.clear()
        for worker in live:
            worker.stop()


class RemoteAgent(Agent):
    """A search agent of registered game `game_id` whose moves run in `pool`; each move's seed
    is drawn from this agent's own generator, so a game's seed fixes the moves whichever
    worker makes them. When the pool gives no answer, its fallback (the first quick agent the
    game offers, prompt.QUICK_AGENTS) moves instead and `note` says why (else None)."""

    def __init__(self, pool: MovePool, name: str, settings: tuple, seed: int | None, game_id: str):
        self.pool, self.name, self.settings, self.game_id = pool, name, settings, game_id
        self.fallback = _maker(game_id, first_offered(game_id))(seed=seed)
        self.note: str | None = None
        self.reset(seed)

    def act(self, turn) -> int:
        legal = np.asarray(turn.legal, dtype=np.int64)
        self.note = None
        if len(legal) == 1:
            return int(legal[0])
        action, why = self.pool.choose(self.name, self.settings, int(self.rng.integers(0, 2**32)), turn, self.game_id)
        if action is None or action not in legal:
            self.note = f"{why or 'the agent chose an illegal move'}: the {self.fallback.name} moved instead"
            return int(self.fallback.act(turn))
        return int(action)
