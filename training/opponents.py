"""The opponent pool of self-play: a weighted mix of scripted agents and learner snapshots.

The mix is a mapping from a kind to a weight, e.g. ``{"snapshots": 0.5, "heuristic": 0.3,
"random": 0.2}``. A kind is an agent spec (``agents.make_agent``: a registered name, a policy
file, an sb3 model, ``package.module:Name``) or ``"snapshots"``:
a uniformly chosen one of the learner's last ``snapshot_window`` snapshots (policy files
added with :meth:`OpponentPool.add_snapshot`; older ones stay on disk but are no longer
drawn). Each opponent seat of each game draws its own kind.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sorry_env.agents import AGENTS, ALIASES, Agent, make_agent
from sorry_env.agents.policy import PolicyAgent

SNAPSHOTS = "snapshots"


def check_mix(mix, rules=None, num_players: int | None = None, game=None) -> None:
    """ValueError unless `mix` maps known kinds to weights >= 0 with a positive sum; a kind is
    ``snapshots`` or any agent spec (:func:`agents.make_agent`: a name, a policy file, an sb3
    model, ``package.module:Name``) of `game` (a registered game's id or Game; default: the
    board game). With `rules` and `num_players`, each agent is also checked against that game."""
    if not isinstance(mix, dict) or not mix:
        raise ValueError(f"an opponent mix must be a mapping of kind to weight, got {mix!r}")
    problems = {}
    for kind in mix:
        if kind == SNAPSHOTS or ((kind in AGENTS or kind in ALIASES) and kind != "azsearch"):
            continue  # (azsearch needs net=FILE: built below, so a bare name is refused here)
        try:
            agent = make_agent(kind, game=game)
            if rules is not None and num_players is not None:
                agent.check_game(rules, num_players)
        except (ValueError, TypeError) as error:
            problems[kind] = str(error)
    if problems:
        raise ValueError(
            f"unknown kinds {list(problems)}; use {SNAPSHOTS!r}, one of {sorted(AGENTS)} or another "
            f"agent spec ({'; '.join(problems.values())})"
        )
    weights = list(mix.values())
    if (
        not all(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0 for w in weights)
        or sum(weights) <= 0
    ):
        raise ValueError(f"weights must be numbers >= 0 with a positive sum, got {mix}")


class OpponentPool:
    def __init__(
        self, mix: dict[str, float], snapshot_sample: bool = True, snapshot_window: int = 20, seed: int = 0, game=None
    ):
        try:
            check_mix(mix, game=game)
        except ValueError as e:
            raise ValueError(f"opponent mix: {e}") from None
        self.mix = {k: float(w) for k, w in mix.items() if w > 0}
        self.snapshot_sample = snapshot_sample
        self.snapshot_window = snapshot_window
        self.snapshot_paths: list[str] = []
        # Snapshot agents are shared by every env of the process: they hold only a read-only
        # network and a random generator.
        self.snapshot_agents: list[Agent | None] = []
        self._seed = seed

    def add_snapshot(self, path: str | Path) -> None:
        agent = PolicyAgent(path, seed=self._seed + len(self.snapshot_paths), sample=self.snapshot_sample)
        self.snapshot_paths.append(str(path))
        self.add_agent(agent)

    def add_agent(self, agent) -> None:
        """Add an agent object as the newest snapshot (``add_snapshot`` adds a policy file): e.g. a
        frozen copy of a learner that is not a policy file, refreshed in place by its trainer
        (sorry-bench's self-play runs of MaskablePPO and DQN). It is not saved with a run."""
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

    def snapshot(self, label: str) -> Agent | None:
        return self.snapshot_agents[int(label.removeprefix("snapshot_"))]

    def sample(self, rng: np.random.Generator, n: int) -> list:
        """Opponents for `n` seats of one game, each drawn on its own: an agent name (the env
        makes and keeps its own agent for it) or a snapshot's agent (a PolicyAgent, or one added by
        :meth:`add_agent`). The Gymnasium env's
        ``opponent_sampler`` (sorry_env.gym_env); the env holds the agents for the whole game, so
        a snapshot that leaves the window mid-game still plays it out."""
        labels = [self.draw(rng) for _ in range(n)]
        return [self.snapshot(label) if label.startswith("snapshot_") else label for label in labels]
