"""Agents for sorry_env: scripted baselines, search agents and trained policies, all behind
the interface in :mod:`agents.base`. ``make_agent(spec)`` builds one from a name, optionally
with settings: ``"expectimax:depth=3"``, ``"mcts:iterations=400,rollout_plies=20"``."""
import os
import pathlib

import sorry_env
from sorry_env.numba_cache import clear_stale

# Agents compile code that calls the engine: recompile when either changes.
clear_stale(pathlib.Path(__file__).parent, pathlib.Path(sorry_env.__file__).parent)

from .base import Agent, Turn, public_view  # noqa: E402
from .expectimax import ExpectimaxAgent  # noqa: E402
from .greedy import GreedyAgent  # noqa: E402
from .heuristic import HeuristicAgent  # noqa: E402
from .mcts import MCTSAgent  # noqa: E402
from .random_agent import RandomAgent  # noqa: E402

AGENTS = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "expectimax": ExpectimaxAgent,
    "mcts": MCTSAgent,
}


def _setting(text: str):
    """A spec setting's value: an int or a float when it reads as one."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def make_agent(spec: str, seed=None) -> Agent:
    """An agent from a registered name (see AGENTS), with optional ``name:key=value,...``
    settings passed to its constructor; or a trained policy file (``*.safetensors``)."""
    name, _, settings = spec.partition(":")
    if name not in AGENTS and (spec.endswith(".safetensors") or os.path.isfile(spec)):
        from .policy import PolicyAgent  # imports torch: only when a policy is asked for

        return PolicyAgent(spec, seed=seed)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; choose from {sorted(AGENTS)}")
    kwargs = {}
    for item in filter(None, settings.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"agent setting {item!r} in {spec!r} must look like key=value")
        kwargs[key.strip()] = _setting(value.strip())
    try:
        return AGENTS[name](seed=seed, **kwargs)
    except TypeError as e:
        raise ValueError(f"bad settings for agent {name!r} in {spec!r}: {e}") from None


__all__ = ["Agent", "Turn", "public_view", "make_agent", "AGENTS", "RandomAgent", "GreedyAgent",
           "HeuristicAgent", "ExpectimaxAgent", "MCTSAgent"]
