"""A PettingZoo AEC env for any registered game (:mod:`sorry_env.games`), built from its
functional API alone: what a new game gets before (or instead of) an env of its own.

Agents are ``player_<seat>``; the observation is ``{"observation": game.observation(...),
"action_mask": ...}``; +1 to the winner and -1 to the others; every agent is truncated once
``max_turns`` turns are finished (default: the game's own limit). ``reset(seed)`` starts a
new game from the seed; ``options={"state": STATE_DICT}`` loads a position."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from .aec_checks import ClassicChecks, StepChecks
from .game import check_seed
from .games import Game, load_game


def wrap_env(raw: AECEnv) -> AECEnv:
    """`raw` with the checks of PettingZoo's standard classic-game wrappers: an illegal move
    ends the game (the offender gets -1), out-of-range actions and calls out of order are
    refused (:class:`sorry_env.aec_checks.ClassicChecks`, the three wrappers in one). Every
    game's ``env()`` is its ``raw_env()`` wrapped this way."""
    return ClassicChecks(raw, illegal_reward=-1)


class GameEnv(StepChecks, AECEnv):
    metadata: ClassVar[dict] = {"render_modes": [], "name": "sorry_env_game", "is_parallelizable": False}

    def __init__(self, game: Game | str, num_players: int, max_turns: int | None = None) -> None:
        super().__init__()
        self.game = load_game(game) if isinstance(game, str) else game
        if not isinstance(self.game, Game):
            raise TypeError(f"game must be a registered game's id or a Game, got {game!r}")
        kind = self.game.game_type
        self.num_players = kind.check_players(num_players)
        limit = kind.max_turns if max_turns is None else max_turns
        if isinstance(limit, bool) or not isinstance(limit, (int, np.integer)) or limit < 1:
            raise ValueError(f"max_turns must be a positive integer or None, got {max_turns!r}")
        self.max_turns = int(limit)
        self.render_mode = None
        self._state: np.ndarray | None = None
        self._mask = np.zeros(self.game.num_actions, dtype=np.int8)  # the mover's legal actions
        probe = self.game.new_state(self.num_players, seed=0)
        self.possible_agents = [kind.seat_names[s] for s in self.game.seats(probe)]
        self._agent_seat = {a: s for a, s in zip(self.possible_agents, self.game.seats(probe))}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.game.observation_size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.game.num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces: dict[str, spaces.Space] = {
            a: spaces.Discrete(self.game.num_actions) for a in self.possible_agents
        }

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1)[0])
        check_seed(seed)
        options = options or {}
        if "state" in options:
            state = self.game.state_from_dict(options["state"], seed)
            players = len(self.game.seats(state))
            if players != self.num_players:
                raise ValueError(f"the state has {players} players; this env has {self.num_players}")
        else:
            state = self.game.new_state(self.num_players, seed=seed)
        self._state = state
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos: dict[str, dict] = {a: {} for a in self.agents}
        self._after_change()

    def _after_change(self) -> None:
        state = self._game()
        self.agent_selection = self.game.game_type.seat_names[self.game.to_move(state)]
        winner = self.game.winner(state)
        if winner is not None:
            for a in self.agents:
                self.rewards[a] = 1.0 if self._agent_seat[a] == winner else -1.0
                self.terminations[a] = True
        elif self.game.turn(state) >= self.max_turns:
            for a in self.agents:
                self.truncations[a] = True
        self._mask[:] = 0
        if not self._over():
            self._mask[self.game.legal_actions(state)] = 1

    def _over(self) -> bool:
        return any(self.terminations.values()) or any(self.truncations.values())

    def _refuse_action(self, action: Any) -> None:
        legal = self.game.legal_actions(self._game()).tolist()
        raise ValueError(f"action {action!r} is illegal; legal: {legal}")

    def step(self, action: int | None) -> None:
        agent = self._acting_agent(action, self.game.num_actions)
        if agent is None:
            return
        self._state = self.game.apply(self._game(), int(action))  # type: ignore[arg-type]
        self._cumulative_rewards[agent] = 0.0
        for a in self.agents:
            self.rewards[a] = 0.0
        self._after_change()
        self._accumulate_rewards()

    def observe(self, agent: str) -> dict:
        if agent not in self._agent_seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        state = self._game()
        mask = self._mask.copy() if agent == self.agent_selection else np.zeros_like(self._mask)
        return {"observation": self.game.observation(state, self._agent_seat[agent]), "action_mask": mask}

    def render(self) -> None:
        return None

    def close(self) -> None:
        pass

    def state_dict(self) -> dict:
        return self.game.state_to_dict(self._game())

    @property
    def state_array(self) -> np.ndarray:
        return self._game().copy()
