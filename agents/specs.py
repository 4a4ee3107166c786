"""Agent specs, parsed once for every game: ``name:key=value,...`` (settings parsed as the
types of the constructor's defaults, unknown ones refused by name), old names (:data:`ALIASES`)
and ``package.module:Name[:settings]`` (your own agent, imported from the Python path).
``sorry_env.agents.make_agent`` builds the board game's agents and every other registered
game's with these."""

from __future__ import annotations

import importlib
import inspect
import math
import os
from collections.abc import Iterable
from typing import Any

from sorry_env.extras import extra_for, missing_extra_error

from .base import Agent

# Old spec names that still work: alias -> name (of the board game's AGENTS, and of the same
# names in other games).
ALIASES = {"mcts": "montecarlo"}

# Constructor arguments a spec cannot set: the seed comes from the caller (a tournament seeds
# every game), and evaluation weights and functions are objects made in code
# (sorry_env.board.evaluation.Weights; a game's evaluation for the generic greedy).
NOT_SETTABLE = ("self", "seed", "weights", "evaluation")


def _parameters(maker: Any) -> dict[str, inspect.Parameter]:
    """A function's parameters, or a class's constructor's without self (a class with no
    constructor of its own: none); empty for a builtin without a signature."""
    try:
        return dict(inspect.signature(maker).parameters)
    except (TypeError, ValueError):
        return {}


def settings_from_spec(maker: Any, name: str, spec: str, settings: str) -> dict:
    """Constructor keyword arguments from the ``key=value,...`` part of a spec, each parsed as
    the type of the constructor's default, so a typo or a value of the wrong kind is refused
    here with its name instead of failing (or being silently rounded) inside the agent."""
    defaults = {
        key: p.default
        for key, p in _parameters(maker).items()
        if key not in NOT_SETTABLE and p.default is not inspect.Parameter.empty
    }
    kwargs: dict[str, Any] = {}
    for item in filter(None, settings.split(",")):
        key, eq, text = (part.strip() for part in item.partition("="))
        if not eq:
            raise ValueError(f"agent setting {item!r} in {spec!r} must look like key=value")
        if key not in defaults:
            raise ValueError(
                f"agent {name!r} has no setting {key!r} (in {spec!r}); "
                f"its settings: {', '.join(sorted(defaults)) or 'none'}"
            )
        kind = type(defaults[key]) if defaults[key] is not None else str
        try:
            kwargs[key] = kind(text) if kind is not int else int(text, 10)
        except ValueError:
            noun = {int: "an integer", float: "a number"}.get(kind, "text")
            raise ValueError(f"agent setting {key} in {spec!r} must be {noun}, got {text!r}") from None
        # Settings reach compiled code as 64-bit numbers: out of that range, or not finite, is a mistake.
        value: Any = kwargs[key]
        if (kind is int and not -(2**62) < value < 2**62) or (kind is float and not math.isfinite(value)):
            raise ValueError(f"agent setting {key} in {spec!r} is out of range: {text[:40]}")
    return kwargs


def takes_seed(maker: Any) -> bool:
    params = _parameters(maker)
    return "seed" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _needed_arguments(maker: Any) -> list[str]:
    """The parameters of `maker` a spec cannot fill: without a default, other than the seed."""
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    return [
        name
        for name, p in _parameters(maker).items()
        if p.default is inspect.Parameter.empty and p.kind not in variadic and name != "seed"
    ]


def import_agent(spec: str, seed: int | None) -> Agent:
    """An agent from ``package.module:Name`` or ``package.module:Name:key=value,...``: Name is
    an :class:`Agent` subclass, or a function returning an Agent; both get ``seed=`` if they
    take it, and the settings as keyword arguments."""
    module_name, _, rest = spec.partition(":")
    attr, _, settings = rest.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(
            f"agent {spec!r}: cannot import module {module_name!r} ({error}); "
            "is it on the Python path (PYTHONPATH, or installed)?"
        ) from None
    if not hasattr(module, attr):
        raise ValueError(f"agent {spec!r}: module {module_name!r} has no {attr!r}")
    maker = getattr(module, attr)
    if isinstance(maker, type) and not issubclass(maker, Agent):
        raise ValueError(
            f"agent {spec!r}: class {attr} is not an agent; subclass agents.Agent (reset(seed) and act(turn) -> action)"
        )
    if not callable(maker):
        raise ValueError(
            f"agent {spec!r}: {attr} is a {type(maker).__name__}, not an Agent class or a function returning one"
        )
    needed = _needed_arguments(maker)
    if needed:
        what = f"class {attr}'s constructor" if isinstance(maker, type) else f"{attr}()"
        raise ValueError(
            f"agent {spec!r}: {what} needs {', '.join(needed)}, which a spec cannot give (it passes seed= and "
            "settings that have defaults); to play a function of the observation, name a function that "
            "returns agents.CallableAgent(fn)"
        )
    if isinstance(maker, type) and getattr(maker, "act", None) is Agent.act:
        raise ValueError(f"agent {spec!r}: class {attr} does not define act(turn), which chooses a move")
    kwargs = settings_from_spec(maker, attr, spec, settings)
    if takes_seed(maker):
        kwargs["seed"] = seed
    agent = maker(**kwargs)
    if not isinstance(agent, Agent):
        raise ValueError(f"agent {spec!r}: {attr}() returned {type(agent).__name__}, not an agents.Agent")
    if type(agent).act is Agent.act:
        raise ValueError(f"agent {spec!r}: {type(agent).__name__} does not define act(turn), which chooses a move")
    if agent.name == Agent.name:  # the base class's placeholder: name it after its spec
        agent.name = spec
    return agent


def is_import_spec(spec: str, registered: Iterable[str] = ()) -> bool:
    """``module:Name[:settings]`` (a registered name's settings contain '=' instead; a name
    of `registered` is never a module)."""
    module_name, colon, rest = spec.partition(":")
    attr = rest.partition(":")[0]
    return (
        bool(colon)
        and module_name not in registered
        and attr.isidentifier()
        and all(part.isidentifier() for part in module_name.split("."))
    )


def refuse_directory(spec: str) -> None:
    """A folder given where an agent spec goes (a training run's, most often) is refused with
    what to pass instead, not reported as an unknown agent name."""
    if not os.path.isdir(spec):
        return
    policy = os.path.join(spec, "policy.safetensors")
    hint = f"pass its policy file ({policy})" if os.path.isfile(policy) else "pass a policy file (.safetensors)"
    raise ValueError(f"{spec} is a folder, not an agent: {hint}, or sorry-export a training run's checkpoint")


def needs_torch(module: str):
    """This package's module `module` (one that plays policy files, so imports torch), or a
    ModuleNotFoundError that names the extra to add (sorry_env.extras): the environment alone
    (`pip install -e .`) has no torch, and a bare "No module named 'torch'" does not say which."""
    try:
        return importlib.import_module(f".{module}", __package__)
    except ModuleNotFoundError as missing:
        if extra_for(missing) is None:
            raise
        raise missing_extra_error("trained policies", missing) from missing
