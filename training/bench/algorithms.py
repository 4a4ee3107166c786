"""The baselines of sorry-bench, trained from scratch (no imitation, no teacher, no shipped
weights), and the harness that runs one: in-run evaluations as CSV, the final score, the
run's result file.

Each algorithm is an :class:`Algorithm`: its name, the tasks it can train on, and a
``train(task, seed, budget, run_dir, evaluate)`` function that trains for `budget` learner
steps, calls ``evaluate(steps, agent)`` every ``curve_every`` steps (and at the end) and
returns the final agent (an agent spec or an :class:`agents.Agent`). :data:`ALGORITHMS` is
the one table of the trainers sorry-bench runs.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path

from sorry_env import games

from .results import CURVE_FIELDS, format_rate, write_csv
from .tasks import SELF_PLAY, Task


@dataclasses.dataclass(frozen=True)
class Algorithm:
    name: str
    summary: str
    fits: Callable[[Task], str | None]  # None if it can train on the task, else why not
    # Its adapter in training/bench, imported when it is run (so listing the table loads no
    # trainer): the module's ``train(task, seed, budget, run_dir, curve, curve_every)`` returns
    # the final agent, its ``SETTINGS`` are the fixed hyperparameters recorded in every result.
    module: str

    @property
    def adapter(self):
        return importlib.import_module(f"{__package__}.{self.module}")


def batched_game_only(task: Task) -> str | None:
    """None if the task's game has the batched compiled step the board-game trainers need."""
    if games.game_type(task.game_id).batched_step:
        return None
    return "it trains on the board game only (the other registered games train with game_ppo)"


def _other_games_only(task: Task) -> str | None:
    return None if batched_game_only(task) else "it trains the registered games other than the board game"


def self_play_only(task: Task) -> str | None:
    """Why a learner that plays every seat cannot train on `task` beyond the game, or None."""
    if task.learner != SELF_PLAY:
        return "it learns by self-play only (every seat plays the network): use a self-play task"
    return None


ALGORITHMS: dict[str, Algorithm] = {
    a.name: a
    for a in (
        Algorithm(
            "ppo",
            "the native trainer (training/train.py: MaskablePPO, afterstate actor, batched rollouts)",
            batched_game_only,
            "native_ppo",
        ),
        Algorithm(
            "maskable_ppo",
            "sb3-contrib MaskablePPO, MlpPolicy, on the batched env (VectorOpponentEnv through SB3VecEnv; "
            "self-play: against a frozen copy of itself)",
            batched_game_only,
            "maskable_ppo",
        ),
        Algorithm(
            "dqn",
            "masked double DQN (training/bench/dqn.py) on the batched env (self-play: against a frozen copy of itself)",
            batched_game_only,
            "dqn",
        ),
        Algorithm(
            "selfplay_ppo",
            "the single-file masked PPO in plain torch (examples/selfplay_ppo.py, run through "
            "training/bench/selfplay_ppo.py) on Gymnasium's SyncVectorEnv",
            batched_game_only,
            "selfplay_ppo",
        ),
        Algorithm(
            "rllib_ppo",
            "RLlib PPO (training/rllib_backend.py: masked MLP, one env runner), evaluated at checkpoints",
            batched_game_only,
            "rllib_ppo",
        ),
        Algorithm(
            "game_ppo",
            "the PPO of every registered game but the board game (training/game_ppo.py: masked MLP)",
            _other_games_only,
            "game_ppo",
        ),
        Algorithm(
            "expert_iteration",
            "expert iteration from a fresh network (training/expert_iteration.py's search self-play and fit, "
            "one process, no gate), scored as the search with its network",
            lambda task: importlib.import_module(f"{__package__}.expert_iteration").fits(task),
            "expert_iteration",
        ),
        Algorithm(
            "td_lambda",
            "TD(lambda) self-play on afterstate values from random weights (training/td_afterstate.py: "
            "every seat greedy on the network's values, TD-Gammon's recipe)",
            lambda task: batched_game_only(task) or self_play_only(task),
            "td_lambda",
        ),
    )
}


def check_algorithm(name: str, task: Task) -> Algorithm:
    """The algorithm called `name`, able to train on `task`; ValueError listing what exists otherwise."""
    if name not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {name!r}; the algorithms are: {', '.join(ALGORITHMS)}")
    algorithm = ALGORITHMS[name]
    why_not = algorithm.fits(task)
    if why_not:
        fitting = [a.name for a in ALGORITHMS.values() if a.fits(task) is None]
        raise ValueError(
            f"algorithm {name!r} does not fit task {task.name}: {why_not}; "
            f"algorithms for {task.name}: {', '.join(fitting) or 'none yet'}"
        )
    return algorithm


def cpu_model() -> str:
    """The processor's name (from /proc/cpuinfo where there is one) and the core count."""
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f.read(200_000).splitlines():
                if line.startswith("model name"):
                    name = line.partition(":")[2].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} cores"


class Curve:
    """The in-run evaluations of one run, appended to curve.csv as they are measured."""

    def __init__(self, task: Task, path: Path, games: int, start: float):
        self.task, self.path, self.games, self.start = task, path, games, start
        self.rows: list[dict] = []
        self.eval_seconds = 0.0

    def check(self, steps: int, agent, every: int) -> None:
        """Evaluate `agent` at learner step `steps` if none is measured yet or `every` steps
        have passed since the last: a trainer's in-run schedule."""
        if not self.rows or steps - self.rows[-1]["steps"] >= every:
            self.evaluate(steps, agent)

    def finish(self, steps: int, agent) -> None:
        """The last evaluation, at the end of training, unless `steps` is measured already."""
        if not self.rows or self.rows[-1]["steps"] != steps:
            self.evaluate(steps, agent)

    def evaluate(self, steps: int, agent) -> dict:
        from .scoring import score

        began = time.perf_counter()
        row = score(agent, self.task, games=self.games, seed=self.task.eval_seed + 1, workers=1)
        self.eval_seconds += time.perf_counter() - began
        row = {"steps": int(steps), "wall_seconds": round(began - self.start, 1), **row}
        self.add(row)
        return row

    def win_rates(self, steps: int, agent) -> dict:
        """The in-run hook of sorry-train's and the TD trainer's loops: the task's evaluation
        of `agent` (in memory) as {the first evaluation opponent: the win rate}."""
        return {self.task.eval_opponents[0]: self.evaluate(steps, agent)["win_rate"]}

    def add(self, row: dict) -> None:
        self.rows.append(row)
        write_csv(self.path, self.rows, CURVE_FIELDS)
        normalized = "" if row["normalized"] is None else f", normalized {row['normalized']:.3f}"
        print(f"step {row['steps']:,}: win rate {format_rate(row)} over {row['games']} games{normalized}", flush=True)


def run_baseline(
    algorithm: Algorithm,
    task: Task,
    seed: int,
    budget: int,
    run_dir: Path,
    curve_every: int | None = None,
    curve_games: int | None = None,
    final_games: int | None = None,
    command: str = "",
) -> dict:
    """Train `algorithm` on `task` from scratch, with in-run evaluations in run_dir/curve.csv,
    then score the final agent with the task's evaluation; writes and returns run_dir/result.json."""
    from .scoring import score

    run_dir.mkdir(parents=True, exist_ok=True)
    curve_every = task.curve_every if curve_every is None else curve_every
    start, cpu_start = time.perf_counter(), time.process_time()
    curve = Curve(task, run_dir / "curve.csv", task.curve_games if curve_games is None else curve_games, start)
    agent = algorithm.adapter.train(task, seed, budget, run_dir, curve, curve_every)
    train_seconds = time.perf_counter() - start
    # CPU time of this process (not of Ray's workers): on a shared machine wall time says
    # more about the other jobs than about the algorithm.
    train_cpu_seconds = time.process_time() - cpu_start
    final = score(agent, task, games=final_games, workers=1)
    final["agent"] = algorithm.name
    result = {
        "task": task.id,
        "algorithm": algorithm.name,
        "seed": seed,
        "budget": budget,
        "steps": curve.rows[-1]["steps"] if curve.rows else budget,
        "train_seconds": round(train_seconds, 1),
        "train_cpu_seconds": round(train_cpu_seconds, 1),
        "eval_seconds_in_training": round(curve.eval_seconds, 1),
        "score_seconds": final["seconds"],
        "cpu": cpu_model(),
        "settings": algorithm.adapter.SETTINGS,
        "command": command,
        "score": final,
    }
    (run_dir / "result.json").write_text(json.dumps(result, indent=1))
    return result
