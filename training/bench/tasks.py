"""The standard tasks of sorry-bench: each a fixed, versioned definition.

A task fixes everything a result depends on: the game (rules preset, player count), who
learns (one seat against fixed opponents, or every seat in self-play), the budget in learner
env steps (opponents' moves not counted), the evaluation (lineup, games, seed) and the
score. Two results on the same task name and version were measured the same way.

Score: the win rate of the agent's side (under team rules its partner finishing counts) in
the task's evaluation tournament (:func:`sorry_env.agents.arena.tournament.run_tournament`, seats and first
mover rotated), with its 95% Wilson interval, and the normalized score

    normalized = (win_rate - random_win_rate) / (heuristic_win_rate - random_win_rate)

where ``random_win_rate`` and ``heuristic_win_rate`` are the anchors: the random and the
heuristic agent measured in the same evaluation (same lineup, games and seed), stored with
the task (:data:`ANCHORS`). Random scores 0 and the heuristic 1 by construction; above 1 is
better than the heuristic.

Versioning (as the env's, docs/versioning.md): ``tests/bench_tasks_golden.json`` pins every
task's definition. Changing anything in a definition (budget, lineup, games, seed, rules, the
anchors after a re-measurement) changes the task: bump its ``version``, re-measure its
anchors, add a CHANGELOG line, then record the golden file again
(``python tests/test_bench.py --record``). Results of another version are not comparable.
"""

from __future__ import annotations

import dataclasses

# The `game` of a board-game task (they name a rules preset); any other task names a
# registered game's id (sorry_env.games).
BOARD = "board"
# The learner's seats: one seat (rotated game by game) against fixed opponents, or every seat.
ONE_SEAT, SELF_PLAY = "one_seat", "self_play"


@dataclasses.dataclass(frozen=True)
class Task:
    name: str
    version: int
    summary: str
    game: str  # BOARD, or the id of another registered game (sorry_env.games)
    rules: str | None  # a preset of sorry_env.board.rules.PRESETS (board game), None for another game
    players: int
    learner: str  # ONE_SEAT or SELF_PLAY
    opponents: tuple[str, ...]  # the fixed opponents' agent names, one per other seat (empty: self-play)
    budget: int  # learner env steps
    eval_opponents: tuple[str, ...]  # the evaluation lineup after the agent, one per other seat
    eval_games: int
    eval_seed: int
    curve_games: int  # games of each in-run evaluation (a trend, not the score)
    curve_every: int  # learner steps between in-run evaluations

    @property
    def game_id(self) -> str:
        """The registered game's id: a task naming a rules preset plays the game those presets
        are of, the default game (its stored `game` reads BOARD: task data older than the registry)."""
        from sorry_env import games

        return self.game if self.rules is None else games.default_game_id()

    @property
    def id(self) -> str:
        return f"{self.name}-v{self.version}"

    @property
    def preset(self) -> str:
        """The board-game task's rules preset; ValueError for a task of another game."""
        if self.rules is None:
            raise ValueError(f"task {self.name!r} plays {self.game_id}, which has no rules preset")
        return self.rules

    def opponent_mix(self, itself: str) -> dict[str, float]:
        """The learner's opponents as a trainer's mix of kinds: `itself` (the trainer's kind for
        copies of the learner: ``snapshots``, ``self``) in a self-play task, else each of the
        task's fixed opponents, with equal weights."""
        return {itself: 1.0} if self.learner == SELF_PLAY else dict.fromkeys(self.opponents, 1.0)

    def lineup(self, agent) -> list:
        """The evaluation lineup with `agent` as entry 0 (under team rules entry 2 is its partner)."""
        return [agent, *self.eval_opponents]

    def definition(self) -> dict:
        """Everything that defines the task, as plain JSON (the golden file's entry)."""
        data = dataclasses.asdict(self)
        data["opponents"], data["eval_opponents"] = list(self.opponents), list(self.eval_opponents)
        data["anchors"] = ANCHORS[self.name]
        return data


def _task(name, summary, rules, players, learner, budget, game=BOARD) -> Task:
    return Task(
        name=name,
        version=1,
        summary=summary,
        game=game,
        rules=rules,  # a preset for a board-game task, None for another game
        players=players,
        learner=learner,
        opponents=() if learner == SELF_PLAY else ("heuristic",) * (players - 1),
        budget=budget,
        eval_opponents=("heuristic",) * (players - 1),
        eval_games=2000,  # a multiple of players**2: seats and first mover exactly balanced
        eval_seed=20_251_125,
        curve_games=400,
        curve_every=budget // 10,
    )


TASKS: dict[str, Task] = {
    task.name: task
    for task in (
        _task(
            "2p-heuristic",
            "2 players, hasbro2003: one seat against the heuristic (single-agent Gymnasium env)",
            "hasbro2003",
            2,
            ONE_SEAT,
            1_000_000,
        ),
        _task(
            "2p-selfplay",
            "2 players, hasbro2003: self-play with no fixed opponent, scored against the heuristic",
            "hasbro2003",
            2,
            SELF_PLAY,
            1_000_000,
        ),
        _task(
            "4p-heuristic",
            "4 players, hasbro2003: one seat against three heuristics",
            "hasbro2003",
            4,
            ONE_SEAT,
            1_000_000,
        ),
        _task(
            "4p-teams-heuristic",
            "4 players, hasbro2003_teams: one seat with a heuristic partner against two heuristics",
            "hasbro2003_teams",
            4,
            ONE_SEAT,
            1_000_000,
        ),
        _task(
            "express-2p-heuristic",
            "Sorry! Express, 2 players: one seat against the heuristic",
            None,
            2,
            ONE_SEAT,
            500_000,
            game="express",  # a registered game's id (data: the task and its name predate the registry)
        ),
    )
}

# The anchors of the normalized score, measured with the task's own evaluation (2026-11-25):
#   sorry-bench score random --workers 1   and   sorry-bench score heuristic --workers 1
# {task: {agent: [wins, games]}}.
ANCHORS: dict[str, dict[str, list[int]]] = {
    "2p-heuristic": {"random": [270, 2000], "heuristic": [999, 2000]},
    "2p-selfplay": {"random": [270, 2000], "heuristic": [999, 2000]},
    "4p-heuristic": {"random": [72, 2000], "heuristic": [495, 2000]},
    "4p-teams-heuristic": {"random": [374, 2000], "heuristic": [1013, 2000]},
    "express-2p-heuristic": {"random": [395, 2000], "heuristic": [989, 2000]},
}


def get_task(name: str) -> Task:
    """The task called `name` (with or without its ``-vN`` suffix); ValueError listing the tasks otherwise."""
    base, dash, version = name.rpartition("-v")
    if dash and version.isdigit() and base in TASKS:
        if TASKS[base].version != int(version):
            raise ValueError(f"task {base!r} is at version {TASKS[base].version}, not {version}")
        return TASKS[base]
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; the tasks are: {', '.join(TASKS)}")
    return TASKS[name]


def normalized_score(task: Task, win_rate: float) -> float | None:
    """(win_rate - random) / (heuristic - random) with the task's measured anchors, or None if
    they are not measured."""
    rates = anchor_rates(task.name)
    if "random" not in rates or "heuristic" not in rates:
        return None
    return (win_rate - rates["random"]) / (rates["heuristic"] - rates["random"])


def anchor_rates(name: str) -> dict[str, float]:
    """{agent: its measured win rate} of the anchors of the task called `name` (none for a
    task that is not, or no longer, defined)."""
    return {agent: wins / games for agent, (wins, games) in ANCHORS.get(name, {}).items()}
