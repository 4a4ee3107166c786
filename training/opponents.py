"""The opponent pool of self-play: a weighted mix of scripted agents and learner snapshots.

The mix is a mapping from a kind to a weight, e.g. ``{"snapshots": 0.5, "heuristic": 0.3,
"random": 0.2}``. A kind is a registered agent name (``agents.AGENTS``) or ``"snapshots"``:
a uniformly chosen one of the learner's last ``snapshot_window`` snapshots (policy files
added with :meth:`OpponentPool.add_snapshot`; older ones stay on disk but are no longer
drawn). Each opponent seat of each game draws its own kind.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from agents import AGENTS, ALIASES
from agents.policy import PolicyAgent

SNAPSHOTS = "snapshots"


def check_mix(mix: dict[str, float]) -> None:
    """ValueError unless `mix` maps known kinds to weights >= 0 with a positive sum."""
    if not isinstance(mix, dict) or not mix:
        raise ValueError(f"an opponent mix must be a mapping of kind to weight, got {mix!r}")
    unknown = [k for k in mix if k != SNAPSHOTS and k not in AGENTS and k not in ALIASES]
    if unknown:
        raise ValueError(f"unknown kinds {unknown}; use {SNAPSHOTS!r} or one of {sorted(AGENTS)}")
    weights = list(mix.values())
    if (not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)
            or sum(weights) <= 0):
        raise ValueError(f"weights must be numbers >= 0 with a positive sum, got {mix}")


class OpponentPool:
    def __init__(self, mix: dict[str, float], snapshot_sample: bool = True, snapshot_window: int = 20,
                 seed: int = 0):
        try:
            check_mix(mix)
        except ValueError as e:
            raise ValueError(f"opponent mix: {e}") from None
        self.mix = {k: float(w) for k, w in mix.items() if w > 0}
        self.snapshot_sample = snapshot_sample
        self.snapshot_window = snapshot_window
        self.snapshot_paths: list[str] = []
        # Snapshot agents are shared by every env of the process: they hold only a read-only
        # network and a random generator.
        self.snapshot_agents: list[PolicyAgent | None] = []
        self._seed = seed

    def add_snapshot(self, path: str | Path) -> None:
        agent = PolicyAgent(path, seed=self._seed + len(self.snapshot_paths), sample=self.snapshot_sample)
        self.snapshot_paths.append(str(path))
        self.snapshot_agents.append(agent)
        old = len(self.snapshot_agents) - 1 - self.snapshot_window
        if old >= 0:
            self.snapshot_agents[old] = None  # out of the window: free its memory

    def draw(self, rng: np.random.Generator) -> str:
        """A label for one opponent seat: an agent name, or ``snapshot_<k>``."""
        kinds = [k for k in self.mix if k != SNAPSHOTS or self.snapshot_agents]
        if not kinds:
            raise ValueError("the opponent mix holds only snapshots and no snapshot was added yet")
        weights = np.array([self.mix[k] for k in kinds])
        kind = kinds[rng.choice(len(kinds), p=weights / weights.sum())]
        if kind == SNAPSHOTS:
            n = len(self.snapshot_agents)
            return f"snapshot_{n - 1 - rng.integers(min(n, self.snapshot_window))}"
        return kind

    def snapshot(self, label: str) -> PolicyAgent:
        return self.snapshot_agents[int(label.removeprefix("snapshot_"))]
