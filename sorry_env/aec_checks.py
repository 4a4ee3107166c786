""":class:`ClassicChecks`, the checks every game's ``env()`` adds to its AEC env (PettingZoo's
classic-game wrappers, in one). The checks the env itself makes before a step are
:class:`sorry_env.game_env.GameEnv`'s."""

from __future__ import annotations

from pettingzoo import AECEnv
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers import OrderEnforcingWrapper


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

    The wrapped env is a :class:`sorry_env.game_env.GameEnv` (its ``_mask`` is the mover's legal actions)."""

    agents = _env_attribute("agents")
    agent_selection = _env_attribute("agent_selection")
    rewards = _env_attribute("rewards")
    terminations = _env_attribute("terminations")
    truncations = _env_attribute("truncations")
    infos = _env_attribute("infos")
    _cumulative_rewards = _env_attribute("_cumulative_rewards")

    def __init__(self, env: AECEnv, illegal_reward: float):
        from .game_env import GameEnv  # which wraps its envs with this class

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
