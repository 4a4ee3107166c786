"""The checks the AEC envs of the registered games (the board game's :mod:`sorry_env.env`, and
the envs of the others' folders) make before a step, in one place so every game refuses bad
calls with the same messages; and :class:`ClassicChecks`, the checks ``env()`` adds (PettingZoo's
classic-game wrappers, in one)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper


class StepChecks:
    """Mixin for an AECEnv holding its engine state in ``self._state`` and the acting agent's
    legal-action mask in ``self._mask``; the env supplies :meth:`_refuse_action`."""

    _state: np.ndarray | None
    _mask: np.ndarray
    # Provided by pettingzoo.AECEnv, which the env class also derives from.
    agents: list[str]
    agent_selection: str
    terminations: dict[str, bool]
    truncations: dict[str, bool]

    if TYPE_CHECKING:  # only for the type checker: a method here would shadow AECEnv's

        def _was_dead_step(self, action: object) -> None: ...

    def _game(self) -> np.ndarray:
        """The engine state, or a clear error before the first reset (the order-enforcing
        wrapper of ``env()`` checks this too; ``raw_env`` users get the same message)."""
        state = getattr(self, "_state", None)
        if state is None:
            raise RuntimeError("call reset() before using the environment")
        return state

    def _refuse_action(self, action) -> None:
        """Raise a ValueError naming the legal actions (each game words its own)."""
        raise NotImplementedError

    def _acting_agent(self, action, n_actions: int) -> str | None:
        """The agent `action` is for, once the step's checks pass; None if the step was a
        finished agent's (PettingZoo's dead step, already taken). Raises on a step before
        reset, after everyone stepped out, or with an action that is not a legal index."""
        self._game()
        if not self.agents:
            raise RuntimeError("the game is over and every agent has stepped out; call reset() for a new game")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return None
        if (
            isinstance(action, (bool, np.bool_))
            or not isinstance(action, (int, np.integer))
            or not 0 <= action < n_actions
            or not self._mask[action]
        ):
            self._refuse_action(action)
        return agent


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

    The wrapped env is a :class:`StepChecks` env (its ``_mask`` is the mover's legal actions)."""

    agents = _env_attribute("agents")
    agent_selection = _env_attribute("agent_selection")
    rewards = _env_attribute("rewards")
    terminations = _env_attribute("terminations")
    truncations = _env_attribute("truncations")
    infos = _env_attribute("infos")
    _cumulative_rewards = _env_attribute("_cumulative_rewards")

    def __init__(self, env: AECEnv, illegal_reward: float):
        if not isinstance(env, StepChecks):
            raise TypeError(f"ClassicChecks wraps an env of sorry_env's games (a StepChecks env), got {env!r}")
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
