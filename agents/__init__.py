"""Agents for sorry_env: scripted baselines, search agents and trained policies, all behind
the interface in :mod:`agents.base`. ``make_agent(spec)`` builds one from a name."""
from .base import Agent, Turn, public_view
from .random_agent import RandomAgent

AGENTS = {"random": RandomAgent}


def make_agent(spec: str, seed=None) -> Agent:
    """An agent from a registered name (see AGENTS)."""
    if spec in AGENTS:
        return AGENTS[spec](seed=seed)
    raise ValueError(f"unknown agent {spec!r}; choose from {sorted(AGENTS)}")


__all__ = ["Agent", "Turn", "public_view", "make_agent", "AGENTS", "RandomAgent"]
