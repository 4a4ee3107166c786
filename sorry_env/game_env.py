"""The one PettingZoo AEC env of every registered game (:mod:`sorry_env.games`), written over
its functional API: a game's own env (the board game's :mod:`sorry_env.board.env`, and the
``env.py`` of a game's folder) is a thin adaptor that declares what differs (its arguments,
faster in-place engine calls, rewards under scoring rules, extra infos, pictures) and a game
without an env of its own uses :class:`GameEnv` as it is.

Agents are the game's seat names (``player_<seat>``); the observation is ``{"observation":
game.observation(...), "action_mask": ...}``, the mask 1 exactly on the legal actions of the
player to move (all zero for the others and once the game is over); +1 to the winner and -1
to the others unless the game says otherwise; every agent is truncated once ``max_turns``
turns are finished. ``reset(seed)`` starts a new game from the seed (numpy's
``SeedSequence(seed)``, its first word, seeds the engine); ``options={"state": STATE_DICT}``
loads a position. The end of a game (rewards, terminations or truncations, the agent
selected, infos) is written once here, in :meth:`GameEnv._settle`; :class:`ClassicChecks` is
the wrapper every game's ``env()`` adds (PettingZoo's classic-game wrappers, in one)."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .board.game import check_seed
from .checks import is_integer
from .games import Game, load_game

NO_LIMIT = int(np.iinfo(np.int64).max)  # the max_turns of an env that never truncates


def check_max_turns(max_turns: Any) -> int:
    """`max_turns` as an int (None: :data:`NO_LIMIT`), else the ValueError every env of a game
    gives."""
    if max_turns is None:
        return NO_LIMIT
    if not is_integer(max_turns) or max_turns < 1:
        raise ValueError(f"max_turns must be a positive integer or None, got {max_turns!r}")
    return int(max_turns)


def wrap_env(raw: AECEnv) -> AECEnv:
    """`raw` with the checks of PettingZoo's standard classic-game wrappers: an illegal move
    ends the game (the offender gets -1), out-of-range actions and calls out of order are
    refused (:class:`ClassicChecks`, the three wrappers in one). Every
    game's ``env()`` is its ``raw_env()`` wrapped this way."""
    return ClassicChecks(raw, illegal_reward=-1)


class GameEnv(AECEnv):
    """The AEC env of `game` (a :class:`~sorry_env.games.Game` or a registered id) for
    `num_players`; see the module docstring.

    - ``max_turns``: the turn limit (default: the game's own, ``GameType.max_turns``); a
      game's adaptor passes :data:`NO_LIMIT` for its documented ``None``.
    - ``render_mode``: one of ``metadata["render_modes"]`` or None; "ansi" renders
      ``game.render_text``.
    - ``seats``: the seats in play as the adaptor validated them (default: the game's seats
      for `num_players`).

    An adaptor may override the hot calls with in-place engine ones (:meth:`_status`,
    :meth:`_play`, :meth:`_fill_mask`, :meth:`_observation`, :meth:`_new_state`,
    :meth:`_new_game`) and declares the end of its games (:meth:`_final_rewards`,
    :meth:`_final_infos`)."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"], "name": "sorry_env_game", "is_parallelizable": False}

    def __init__(
        self,
        game: Game | str,
        num_players: int | None = None,
        max_turns: int | None = None,
        render_mode: str | None = None,
        seats: tuple[int, ...] | None = None,
    ) -> None:
        super().__init__()
        self.game = load_game(game) if isinstance(game, str) else game
        if not isinstance(self.game, Game):
            raise TypeError(f"game must be a registered game's id or a Game, got {game!r}")
        kind = self.game.game_type
        modes = self.metadata["render_modes"]
        if render_mode is not None and render_mode not in modes:
            raise ValueError(f"render_mode must be None or one of {modes}, got {render_mode!r}")
        self.max_turns = check_max_turns(kind.max_turns if max_turns is None else max_turns)
        if seats is None:
            seats = self.game.seats(self.game.new_state(kind.check_players(num_players), seed=0))
        self.seats = tuple(seats)
        self.num_players = len(self.seats)
        self.render_mode = render_mode
        self.n_actions = self.game.num_actions
        self._state: np.ndarray | None = None
        self._mask = np.zeros(self.n_actions, dtype=np.int8)  # the mover's legal actions
        self._seat_names = kind.seat_names
        self.possible_agents = [kind.seat_names[s] for s in self.seats]
        self._agent_seat = dict(zip(self.possible_agents, self.seats))
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.game.observation_size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (self.n_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces: dict[str, spaces.Space] = dict.fromkeys(self.possible_agents, obs_space)
        self.action_spaces: dict[str, spaces.Space] = {a: spaces.Discrete(self.n_actions) for a in self.possible_agents}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # -- what an adaptor may declare -----------------------------------------------------------
    def _new_state(self, seed32: int) -> np.ndarray:
        """A new game of this env's seats from the engine seed `seed32`."""
        return self.game.new_state(self.num_players, seed=seed32)

    def _new_game(self, state: np.ndarray) -> None:
        """A new game starts at `state` (reset): what the adaptor follows (default: nothing)."""

    def _status(self) -> tuple[int, int, int]:
        """(the seat to move, the winning seat or -1, turns finished) of the game in play."""
        game, state = self.game, self._game()
        winner = game.winner(state)
        return game.to_move(state), -1 if winner is None else winner, game.turn(state)

    def _play(self, action: int) -> None:
        """Play the legal `action` on ``self._state`` (chance drawn from the state)."""
        self._state = self.game.apply(self._game(), action)

    def _fill_mask(self) -> None:
        """``self._mask`` := the legal actions of the player to move in a running game."""
        self._mask[:] = 0
        self._mask[self.game.legal_actions(self._game())] = 1

    def _observation(self, seat: int) -> np.ndarray:
        return self.game.observation(self._game(), seat)

    def _final_rewards(self, winner: int) -> dict[str, float]:
        """Every agent's reward in a game `winner` won."""
        return {a: 1.0 if seat == winner else -1.0 for a, seat in self._agent_seat.items()}

    def _final_infos(self, winner: int) -> dict[str, dict]:
        """What every agent's infos gain when `winner` has won (default: nothing)."""
        return {}

    def _refuse_action(self, action: Any) -> None:
        """Raise a ValueError naming the legal actions (a game may word its own)."""
        legal = self.game.legal_actions(self._game()).tolist()
        raise ValueError(f"action {action!r} is illegal; legal: {legal}")

    # -- lifecycle ---------------------------------------------------------------------------
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            check_seed(seed)
        seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
        options = options or {}  # other keys are ignored, as Gymnasium envs do
        if "state" in options:
            state = self.game.state_from_dict(options["state"], seed32)
            given = self.game.seats(state)
            if given != self.seats:
                raise ValueError(
                    f"the state's seats {given} differ from this env's seats {self.seats} "
                    f"(the state has {len(given)} players; this env has {self.num_players})"
                )
        else:
            state = self._new_state(seed32)
        self._state = state
        self._new_game(state)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in self.agents}
        self._settle()

    def _game(self) -> np.ndarray:
        """The engine state, or a clear error before the first reset (the order-enforcing
        wrapper of ``env()`` checks this too; ``raw_env`` users get the same message)."""
        if self._state is None:
            raise RuntimeError("call reset() before using the environment")
        return self._state

    def step(self, action: int | None) -> None:
        """Play the selected agent's `action`. Raises before reset, after every agent stepped
        out, or on an action that is not a legal index; a finished agent's step is
        PettingZoo's dead step."""
        self._game()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out; call reset() for a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if (
            isinstance(action, (bool, np.bool_))
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < self.n_actions
            or not self._mask[action]
        ):
            self._refuse_action(action)
        self._play(int(action))  # type: ignore[arg-type]  # refused above unless a legal index
        self._cumulative_rewards[agent] = 0.0
        self._settle()

    def _settle(self) -> None:
        """After a reset or a move: the agent to move, and the end of the game when it came
        (rewards, terminations, infos; truncations at the turn limit); the mover's mask.
        Rewards are zero until the move that wins, and no agent moves after it, so only that
        move sets and accumulates them."""
        to_move, winner, turn = self._status()
        self.agent_selection = self._seat_names[to_move]
        if winner >= 0:
            self.rewards.update(self._final_rewards(winner))
            for a, extra in self._final_infos(winner).items():
                self.infos[a].update(extra)
            self.terminations = dict.fromkeys(self.agents, True)
            self._mask[:] = 0
            self._accumulate_rewards()
        elif turn >= self.max_turns:
            self.truncations = dict.fromkeys(self.agents, True)
            self._mask[:] = 0
        else:
            self._fill_mask()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict:
        seat = self._agent_seat.get(agent)
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        obs = self._observation(seat)  # first: refused before reset
        mask = self._mask.copy() if agent == self.agent_selection else np.zeros_like(self._mask)
        return {"observation": obs, "action_mask": mask}

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            modes = " or ".join(map(repr, self.metadata["render_modes"]))
            gymnasium.logger.warn(f"render() called without a render_mode; pass render_mode={modes}")
            return None
        return self.game.render_text(self._game())

    def close(self) -> None:
        pass

    # -- engine access -----------------------------------------------------------------------
    def state_dict(self) -> dict:
        """The current position as a JSON-able state dict (the game's ``state_to_dict``)."""
        return self.game.state_to_dict(self._game())

    @property
    def state_array(self) -> np.ndarray:
        """A copy of the engine state array (for search agents: the game's functional API)."""
        return self._game().copy()

    def describe_action(self, action: int) -> str:
        return self.game.describe_action(self._game(), action)


def _env_attribute(name: str) -> property:
    """An attribute of the wrapped env read straight from it (PettingZoo's BaseWrapper.__getattr__
    walks the wrapper chain at every read), refused before reset as OrderEnforcingWrapper does."""

    def read(self):
        if not self._has_reset and name != "_cumulative_rewards":
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(read)


class ClassicChecks(OrderEnforcingWrapper):
    """PettingZoo's three classic-game wrappers in one, with their errors and warnings: what
    ``TerminateIllegalWrapper(illegal_reward) -> AssertOutOfBoundsWrapper -> OrderEnforcingWrapper``
    does, at about the cost of one wrapper (issue 39: the chain made ``env()`` 3-4.5x slower
    than ``raw_env``).

    - Order (OrderEnforcingWrapper, whose class this is, so ``agent_iter`` and isinstance checks
      behave as with the chain): calls and attributes before ``reset`` are refused, a step
      with no agent left warns.
    - Bounds (AssertOutOfBoundsWrapper): an action outside the action space is an
      AssertionError ("action is not in action space"), ``None`` only for a finished agent.
    - Illegal moves (TerminateIllegalWrapper): a legal-space action that the mover's mask
      refuses ends the game, the mover gets `illegal_reward`, everyone is terminated and
      truncated, with PettingZoo's warning.

    The wrapped env is a :class:`GameEnv` (its ``_mask`` is the mover's legal actions)."""

    agents = _env_attribute("agents")
    agent_selection = _env_attribute("agent_selection")
    rewards = _env_attribute("rewards")
    terminations = _env_attribute("terminations")
    truncations = _env_attribute("truncations")
    infos = _env_attribute("infos")
    _cumulative_rewards = _env_attribute("_cumulative_rewards")

    def __init__(self, env: AECEnv, illegal_reward: float):
        if not isinstance(env, GameEnv):
            raise TypeError(f"ClassicChecks wraps an env of sorry_env's games (a GameEnv), got {env!r}")
        super().__init__(env)
        self._illegal_value = float(illegal_reward)
        self._terminated = False  # ended by an illegal move

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        self._terminated = False
        super().reset(seed=seed, options=options)

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        env = self.env
        if not env.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = env.agent_selection
        finished = env.terminations[agent] or env.truncations[agent]
        assert (action is None and finished) or env.action_space(agent).contains(action), (
            "action is not in action space"
        )
        if self._terminated and finished:
            env._was_dead_step(action)
        elif not finished and not env._mask[action]:
            EnvLogger.warn_on_illegal_move()
            env._cumulative_rewards[agent] = 0
            env.terminations = dict.fromkeys(env.agents, True)
            env.truncations = dict.fromkeys(env.agents, True)
            env.rewards = dict.fromkeys(env.truncations, 0)
            env.rewards[agent] = self._illegal_value
            env._accumulate_rewards()
            env._deads_step_first()
            self._terminated = True
        else:
            env.step(action)
