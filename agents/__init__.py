"""Agents for sorry_env: scripted baselines, search agents and trained policies, all behind
the interface in :mod:`agents.base`. ``make_agent(spec)`` builds one from a name, optionally
with settings: ``"expectimax:depth=3"``, ``"montecarlo:iterations=400,rollout_plies=20"``
(``mcts`` is an alias of ``montecarlo``, its old name: see ALIASES)."""
import inspect
import math
import os

from sorry_env.numba_cache import clear_stale

# Agents compile code that calls the engine: recompile when either changes (one rule for every
# caching package: sorry_env.numba_cache).
clear_stale("agents", "sorry_env")

from .base import Agent, Turn, public_view  # noqa: E402
from .expectimax import ExpectimaxAgent  # noqa: E402
from .greedy import GreedyAgent  # noqa: E402
from .heuristic import HeuristicAgent  # noqa: E402
from .montecarlo import MonteCarloAgent  # noqa: E402
from .random_agent import RandomAgent  # noqa: E402

AGENTS = {
    "random": RandomAgent,
    "greedy": GreedyAgent,
    "heuristic": HeuristicAgent,
    "expectimax": ExpectimaxAgent,
    "montecarlo": MonteCarloAgent,
}
# Old spec names that still work: alias -> name in AGENTS.
ALIASES = {"mcts": "montecarlo"}
MCTSAgent = MonteCarloAgent  # old class name


# Constructor arguments a spec cannot set: the seed comes from the caller (a tournament seeds
# every game), and evaluation weights are objects made in code (agents.evaluation.Weights).
NOT_SETTABLE = ("self", "seed", "weights")


def _settings(name: str, spec: str, settings: str) -> dict:
    """Constructor keyword arguments from the ``key=value,...`` part of a spec, each parsed as
    the type of the constructor's default, so a typo or a value of the wrong kind is refused
    here with its name instead of failing (or being silently rounded) inside the agent."""
    params = inspect.signature(AGENTS[name].__init__).parameters
    defaults = {key: p.default for key, p in params.items() if key not in NOT_SETTABLE}
    kwargs = {}
    for item in filter(None, settings.split(",")):
        key, eq, text = (part.strip() for part in item.partition("="))
        if not eq:
            raise ValueError(f"agent setting {item!r} in {spec!r} must look like key=value")
        if key not in defaults:
            raise ValueError(f"agent {name!r} has no setting {key!r} (in {spec!r}); "
                             f"its settings: {', '.join(sorted(defaults)) or 'none'}")
        kind = type(defaults[key]) if defaults[key] is not None else str
        try:
            kwargs[key] = kind(text) if kind is not int else int(text, 10)
        except ValueError:
            noun = {int: "an integer", float: "a number"}.get(kind, "text")
            raise ValueError(f"agent setting {key} in {spec!r} must be {noun}, got {text!r}") from None
        # Settings reach compiled code as 64-bit numbers: out of that range, or not finite, is a mistake.
        value = kwargs[key]
        if (kind is int and not -2**62 < value < 2**62) or (kind is float and not math.isfinite(value)):
            raise ValueError(f"agent setting {key} in {spec!r} is out of range: {text[:40]}")
    return kwargs


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent from a registered name (see AGENTS), with optional ``name:key=value,...``
    settings passed to its constructor; or a trained policy file (``*.safetensors``)."""
    name, _, settings = spec.partition(":")
    name = ALIASES.get(name, name)
    if name not in AGENTS and (spec.endswith(".safetensors") or os.path.isfile(spec)):
        from .policy import PolicyAgent  # imports torch: only when a policy is asked for

        return PolicyAgent(spec, seed=seed)
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; choose from {sorted(AGENTS)} (or the aliases {sorted(ALIASES)})")
    return AGENTS[name](seed=seed, **_settings(name, spec, settings))


__all__ = ["Agent", "Turn", "public_view", "make_agent", "AGENTS", "RandomAgent", "GreedyAgent",
           "HeuristicAgent", "ExpectimaxAgent", "MonteCarloAgent", "MCTSAgent", "ALIASES"]
