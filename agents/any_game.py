"""Agents for any registered game (:mod:`sorry_env.games`), built only on the registry's
functional API: what a game is played by before it has agents of its own (see
``agents.GAME_AGENT_MODULES``). Random play, and your own function of the observation dict.

They act on a :class:`GameTurn`, built with :meth:`GameTurn.from_state`, which hides what the
player to move cannot see (the game's ``public_view``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from sorry_env import games

from .base import Agent, CallableAgent
from .random_agent import RandomAgent


@dataclasses.dataclass(frozen=True)
class GameTurn:
    """What an agent of any registered game is shown when it must act."""

    game: games.Game
    state: np.ndarray  # the game's public view for the seat to move
    seat: int
    legal: np.ndarray  # legal action indices, ascending

    @classmethod
    def from_state(cls, game: games.Game, state: np.ndarray, rng: np.random.Generator) -> GameTurn:
        """The turn of the seat to move in the true game `state`, hidden parts re-drawn from `rng`."""
        legal = game.legal_actions(state)
        return cls(game, game.public_view(state, rng), game.to_move(state), np.asarray(legal, dtype=np.int64))

    def observation(self) -> dict:
        """The env's observation dict for this seat (for callable agents)."""
        mask = np.zeros(self.game.num_actions, dtype=np.int8)
        mask[self.legal] = 1
        return {"observation": self.game.observation(self.state, self.seat), "action_mask": mask}


GENERIC_AGENTS = {"random": RandomAgent}  # agents that read only turn.legal and their own generator


def make_agent(spec: str, seed: int | None = None) -> Agent:
    """An agent of GENERIC_AGENTS by name; ValueError naming them otherwise."""
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec is text, got {spec!r}")
    if spec not in GENERIC_AGENTS:
        raise ValueError(
            f"unknown agent {spec!r} for a game without agents of its own; choose from {sorted(GENERIC_AGENTS)} "
            "or pass a function of the observation dict"
        )
    return GENERIC_AGENTS[spec](seed=seed)


def action_for(raw: Any, agent: Any, rng: np.random.Generator | None = None) -> int:
    """The action `agent` (a spec, an Agent of GENERIC_AGENTS or a function of the observation
    dict) chooses for the player to move in the env of a registered game."""
    game = games.game_of_env(raw)
    if isinstance(agent, str):
        agent = make_agent(agent)
    elif callable(agent) and not isinstance(agent, (Agent, type)):
        agent = CallableAgent(agent)
    if not isinstance(agent, (RandomAgent, CallableAgent)):
        raise ValueError(f"{agent!r} cannot play {game.game_type.long_name}; use {sorted(GENERIC_AGENTS)}")
    mover = raw.agent_selection
    if not raw.agents or raw.terminations.get(mover) or raw.truncations.get(mover):
        raise ValueError("the game is over (won or truncated): nobody is to move")
    turn = GameTurn.from_state(game, raw.state_array, rng if rng is not None else np.random.default_rng())
    action = agent.act(turn)  # type: ignore[arg-type]  # these agents read only what a GameTurn has
    if action not in turn.legal:
        raise ValueError(f"agent {agent.name!r} chose illegal action {action!r}; legal: {turn.legal.tolist()}")
    return int(action)
