"""Sorry! through PettingZoo's Parallel API, turn-based: ``sorry_env.parallel_env(...)``.

Every ``step`` takes one action dict for the agents still in the game, as parallel envs do,
but only the player to move acts: its action is played, the others' are ignored (any value,
or missing). Their ``action_mask`` says so: it is all zero for everyone but the player to
move, and ``infos[agent]["active_agent"]`` names that player for every agent (as PettingZoo's
``turn_based_aec_to_parallel`` does). Turn order is the game's, not a cycle: a 2 lets the same
player move again, so one agent may act in several steps in a row.

- Arguments: those of :func:`sorry_env.board.env` (``num_players``, ``seats``, ``rules``,
  ``max_turns``, ``render_mode``, ``reward``); observations, rewards, ``state()`` and
  ``state_space`` are the AEC env's.
- Each step returns every agent's observation and the step's reward; when the game ends
  (a win, ``max_turns``, or an illegal move by the player to move: PettingZoo's
  TerminateIllegalWrapper as in :func:`sorry_env.board.env`, -1 to the offender), every agent is
  terminated or truncated in that step and ``agents`` is empty afterwards.
- A step without the mover's action, or after the game is over, raises with the reason.

The AEC env underneath is ``.aec_env`` (``.aec_env.unwrapped`` is the ``raw_env``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv, ParallelEnv

from .board.env import env


def parallel_env(**kwargs: Any) -> SorryParallelEnv:
    """The board game as a turn-based PettingZoo ParallelEnv (arguments: :func:`sorry_env.board.env`'s)."""
    return SorryParallelEnv(env(**kwargs))


class SorryParallelEnv(ParallelEnv):
    """A turn-based ParallelEnv over an AEC env of the board game; see the module docstring."""

    def __init__(self, aec_env: AECEnv):
        self.aec_env = aec_env
        raw = aec_env.unwrapped
        self.metadata = dict(raw.metadata)
        self.possible_agents = list(raw.possible_agents)
        self.agents: list[str] = []
        self.render_mode = raw.render_mode
        self.state_space = raw.state_space

    def observation_space(self, agent):
        return self.aec_env.observation_space(agent)

    def action_space(self, agent):
        return self.aec_env.action_space(agent)

    def reset(self, seed: int | None = None, options: dict | None = None):
        self.aec_env.reset(seed=seed, options=options)
        self.agents = self.aec_env.agents[:]
        return self._observations(), self._infos()

    def step(self, actions: dict):
        aec = self.aec_env
        if not self.agents:
            raise RuntimeError("the game is over (no agent is left); call reset() for a new game")
        if not isinstance(actions, dict):
            raise TypeError(f"actions must be a dict from agent names to actions, got {type(actions).__name__}")
        mover = aec.agent_selection
        if mover not in actions:
            raise ValueError(
                f"actions has no action for {mover}, the player to move (the others' are ignored); got {list(actions)}"
            )
        aec.step(actions[mover])
        observations = self._observations()
        rewards = {agent: float(aec.rewards[agent]) for agent in self.agents}
        terminations = {agent: bool(aec.terminations[agent]) for agent in self.agents}
        truncations = {agent: bool(aec.truncations[agent]) for agent in self.agents}
        infos = self._infos()
        while aec.agents and (aec.terminations[aec.agent_selection] or aec.truncations[aec.agent_selection]):
            aec.step(None)  # the game is over: every agent steps out (PettingZoo's dead steps)
        self.agents = aec.agents[:]
        return observations, rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, Any]:
        return {agent: self.aec_env.observe(agent) for agent in self.agents}

    def _infos(self) -> dict[str, dict]:
        mover = self.aec_env.agent_selection
        return {agent: {**self.aec_env.infos[agent], "active_agent": mover} for agent in self.agents}

    def render(self) -> str | np.ndarray | None:
        return self.aec_env.render()

    def state(self) -> np.ndarray:
        return self.aec_env.state()

    def close(self) -> None:
        self.aec_env.close()
