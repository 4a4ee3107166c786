"""Tournament games over a pool of worker processes (or in this one), in game order."""

from __future__ import annotations

import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool

from tqdm import tqdm

import sorry_env.agents as agents  # mypy: see pyproject [tool.mypy]
from sorry_env.board.rules import Rules
from sorry_env.games import Game

from .play import Table

_worker_table = None  # the Table of a worker process


def _start_worker(agent_specs, rules, max_turns, seed, torch_threads=None):
    global _worker_table
    _worker_table = Table(agent_specs, rules, max_turns, seed)
    agents.set_torch_threads(torch_threads)  # torch is loaded if a policy plays: one thread per worker


def _play_in_worker(game_indices):
    return _worker_table.play_many(game_indices)


LOCKSTEP_CHUNK = 250  # games played side by side per job when a policy acts in batches


def check_picklable(agent_specs: list) -> None:
    """ValueError naming an agent object that cannot be sent to worker processes."""
    for spec in agent_specs:
        if isinstance(spec, str):
            continue
        try:
            pickle.dumps(spec)
        except Exception as error:  # pickling raises many types (PicklingError, TypeError, AttributeError)
            raise ValueError(
                f"agent {agents.agent_label(spec)!r} cannot be sent to worker processes ({error}); "
                "define it at the top level of a module, give it as package.module:Name, "
                "or pass workers=1"
            ) from None


def play_games(
    agent_specs: list,
    games: int,
    seed: int,
    rules: Rules | str | Game,  # the Game played, or the board game's rules
    max_turns: int,
    workers: int,
    progress: bool,
    torch_threads: int | None = None,
) -> list[dict]:
    """Records of games 0..games-1 in index order, played by `workers` processes, each with
    a :class:`sorry_env.agents.arena.play.Table` and
    `torch_threads` torch threads (default: SORRY_TORCH_THREADS, else 1)."""
    # Built here first so that a bad agent spec fails before any worker starts.
    table = Table(agent_specs, rules, max_turns, seed)
    if workers > 1:
        check_picklable(agent_specs)
    lockstep = bool(table.batched)
    chunk = max(1, min(LOCKSTEP_CHUNK, -(-games // workers))) if lockstep else max(1, min(16, games // (8 * workers)))
    if workers == 1:
        agents.set_torch_threads(torch_threads)
    # Game 0 first, here and before the progress bar: on a cold numba cache this is where the
    # compiling happens (so its notice stands on its own line, not after a bar stuck at 0%),
    # and it happens once: spawned workers then load the machine code from the disk cache
    # instead of each compiling it again.
    records = table.play_many(range(min(1, games)))
    with tqdm(total=games, initial=len(records), unit="game", disable=not progress) as bar:
        if workers == 1:
            step = chunk if lockstep else 1
            for start in range(len(records), games, step):
                records.extend(table.play_many(range(start, min(start + step, games))))
                bar.update(len(records) - bar.n)
            return records
        if games <= len(records):
            return records
        # spawn, not fork: a forked child of a process whose torch threads have run (a policy
        # agent, a training loop) hangs in its first torch call. A spawned child re-imports
        # the caller's main script; without the `if __name__ == "__main__":` guard it dies
        # there, and an executor (unlike multiprocessing.Pool, which would respawn it
        # forever) reports that as a broken pool.
        context = multiprocessing.get_context("spawn")
        try:
            with ProcessPoolExecutor(
                workers, context, _start_worker, (agent_specs, rules, max_turns, seed, torch_threads)
            ) as pool:
                first = len(records)
                jobs = [
                    pool.submit(_play_in_worker, range(g, min(g + chunk, games))) for g in range(first, games, chunk)
                ]
                for job in as_completed(jobs):  # the bar moves as chunks finish, in any order
                    records.extend(job.result())
                    bar.update(len(job.result()))
        except BrokenProcessPool as error:
            raise RuntimeError(
                "a tournament worker process died (out of memory, a crash, or, most often, a "
                'script without the `if __name__ == "__main__":` guard: the workers re-import '
                "the main script); pass workers=1 to play in this process"
            ) from error
    return sorted(records, key=lambda record: record["game"])
