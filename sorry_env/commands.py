"""The console scripts (pyproject.toml ``[project.scripts]``): each imports its command's module
only when run, through :func:`sorry_env.extras.run_command`, so that an install without the
command's extra ends with one line naming it instead of an ImportError traceback. The targets
are names, not imports: this module loads nothing of sorry_env.agents or sorry_env.training
until a command runs (tests/test_layout.py reads import statements)."""

from __future__ import annotations

from .extras import run_command

COMMANDS = {
    "sorry-eval": "sorry_env.agents.arena.cli:main",
    "sorry-train": "sorry_env.training.train:main",
    "sorry-export": "sorry_env.training.export:main",
    "sorry-play": "sorry_env.agents.play.terminal:main",
    "sorry-replay": "sorry_env.replay:main",
    "sorry-train-rllib": "sorry_env.training.rllib_backend:main",
    "sorry-serve": "sorry_env.agents.play.serve:main",
    "sorry-expit": "sorry_env.training.expert_iteration:main",
    "sorry-bench": "sorry_env.training.bench.cli:main",
}


def _launcher(command: str):
    """The console script of `command` (a function of no arguments, as pip's wrappers call it)."""

    def launch() -> int | None:
        return run_command(command, COMMANDS[command])

    launch.__name__ = launch.__qualname__ = command.replace("-", "_")
    return launch


sorry_eval = _launcher("sorry-eval")
sorry_train = _launcher("sorry-train")
sorry_export = _launcher("sorry-export")
sorry_play = _launcher("sorry-play")
sorry_replay = _launcher("sorry-replay")
sorry_train_rllib = _launcher("sorry-train-rllib")
sorry_serve = _launcher("sorry-serve")
sorry_expit = _launcher("sorry-expit")
sorry_bench = _launcher("sorry-bench")
