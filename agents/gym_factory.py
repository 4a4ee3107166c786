"""The Gymnasium entry point of ``sorry_env/Sorry-v1``: :func:`make_gym_env` builds the core
env (:class:`sorry_env.gym_env.SorryGymEnv`) with opponents given as agent specs.

The env itself lives in the core and takes Agent objects or functions only (``import
sorry_env`` needs nothing from the agents package); turning text such as ``"heuristic"``,
``"mcts:iterations=200"`` or a policy file into agents (:func:`sorry_env.agents.as_agent`),
and giving torch its threads when an opponent is a policy, is this package's work, done here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sorry_env.board.rules import DEFAULT_PRESET
from sorry_env.gym_env import SorryGymEnv

from . import as_agent, catalog, set_torch_threads
from .base import Agent


class OpponentMaker:
    """The env's ``make_opponent``: an Agent from a spec, an Agent or a function
    (:func:`sorry_env.agents.as_agent`). When the agent is a policy, torch gets
    `torch_threads` threads in this process (1, the default, gives way to the
    ``SORRY_TORCH_THREADS`` environment variable when set; ``None`` leaves torch alone):
    policies evaluate one position at a time, where more threads only add contention.
    ``trained`` stands for the shipped policy of the env's game (`rules`, `num_players`:
    :func:`sorry_env.agents.make_agent`), as in ``sorry-eval``.
    A class rather than a closure, so an env holding it still pickles."""

    def __init__(self, torch_threads: int | None, rules, num_players: int):
        self.torch_threads = torch_threads
        self.rules, self.num_players = rules, num_players

    def __call__(self, entry: object) -> Agent:
        agent = as_agent(entry, game=catalog.policy_game(self.rules), players=self.num_players)
        if self.torch_threads is not None and getattr(agent, "uses_torch", False):
            set_torch_threads(None if self.torch_threads == 1 else self.torch_threads)
        return agent


def make_gym_env(
    num_players: int = 2,
    opponents: Sequence | str | Agent | Callable = ("heuristic",),
    rules=DEFAULT_PRESET,
    *,
    torch_threads: int | None = 1,
    **env_args: Any,
) -> SorryGymEnv:
    """The single-agent Gymnasium env with opponents given as agent specs, Agent objects or
    functions (what ``gymnasium.make("sorry_env/Sorry-v1", ...)`` calls); the arguments are
    :class:`sorry_env.gym_env.SorryGymEnv`'s (`env_args`: seat, max_turns, reward,
    illegal_action, opponent_sampler, render_mode), and `torch_threads` as in
    :class:`OpponentMaker`. An `opponent_sampler` may return specs too."""
    return SorryGymEnv(
        num_players=num_players,
        opponents=opponents,
        rules=rules,
        make_opponent=OpponentMaker(torch_threads, rules, num_players),
        **env_args,
    )


# gymnasium.make reads the entry point's metadata (its render modes), as it would the class's.
make_gym_env.metadata = SorryGymEnv.metadata  # type: ignore[attr-defined]
