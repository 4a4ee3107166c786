"""Stable-Baselines3 ``VecEnv`` over a batched Sorry! env, for MaskablePPO.

``SB3VecEnv(VectorOpponentEnv(...))`` exposes one learner per game (the compiled-opponent
mode of :mod:`sorry_env.vector_opponents`) the way SB3 expects: observations float32[B, D]
(the ``observation`` part; build the env with ``policy_input=True`` for the trained
policies' input vector), rewards float32[B], ``dones`` = terminated or truncated, and per
game ``infos`` holding ``terminal_observation`` (and ``TimeLimit.truncated``) for games that
ended and were reset in the same step. ``action_masks()`` returns bool[B, n_actions]; sb3-contrib's
``get_action_masks`` reaches it through ``env_method("action_masks")``.

Example::

    from sorry_env.vector_opponents import VectorOpponentEnv
    from sb3_contrib import MaskablePPO
    from sorry_env.training.vector_sb3 import SB3VecEnv

    env = SB3VecEnv(VectorOpponentEnv(64, 2, opponents="heuristic", policy_input=True))
    MaskablePPO("MlpPolicy", env, n_steps=64).learn(100_000)

Seeds: ``env.seed(s)`` makes the next ``reset()`` seed game i with ``s + i`` (the batched
env's seed scheme); without it a reset draws fresh seeds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env.base_vec_env import VecEnv, VecEnvIndices


class BatchVecEnvMethods:
    """The parts of SB3's VecEnv interface that every batched env here answers the same way:
    its games share one set of attributes, the only per-game method is ``action_masks`` (what
    sb3-contrib's MaskablePPO calls through ``env_method``), nothing is wrapped or rendered or
    closed, and ``step_async`` keeps the actions for ``step_wait`` (:meth:`take_actions`)."""

    # declared only (no attribute here): the batched env and SB3's VecEnv it is mixed into supply them
    action_masks: Callable[[], np.ndarray]
    num_envs: int
    _get_indices: Callable[[VecEnvIndices], Iterable[int]]
    _actions: np.ndarray | None = None  # step_async's, until step_wait takes them
    _seed: int | None = None  # seed()'s, until the next reset() takes it

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        raise AttributeError(f"the batched env's attributes are shared by all games; cannot set {attr_name!r}")

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._get_indices(indices)]
        raise AttributeError(f"{type(self).__name__} supports env_method('action_masks') only, not {method_name!r}")

    def env_is_wrapped(self, wrapper_class, indices=None) -> list[bool]:
        return [False for _ in self._get_indices(indices)]

    def get_images(self):
        raise NotImplementedError(f"{type(self).__name__} does not render")

    def seed(self, seed: int | None = None):
        """The next reset() seeds its games from `seed` (see the env's docstring); later
        resets draw fresh seeds, as SB3's own VecEnvs do."""
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def take_actions(self) -> np.ndarray:
        """The actions of the last ``step_async``, once (step_wait's first call)."""
        actions, self._actions = self._actions, None
        if actions is None:
            raise RuntimeError("step_wait() without step_async()")
        return actions

    def close(self) -> None:
        pass

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [getattr(self, attr_name) for _ in self._get_indices(indices)]

    def has_attr(self, attr_name: str) -> bool:
        return hasattr(self, attr_name)


class SB3VecEnv(BatchVecEnvMethods, VecEnv):
    def __init__(self, env):
        self.env = env
        self.render_mode = None
        super().__init__(env.num_envs, env.single_observation_space["observation"], env.single_action_space)

    # -- VecEnv API -------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        obs, _ = self.env.reset(seed=self._seed)
        self._seed = None  # later resets draw fresh seeds, as SB3's own VecEnvs do
        return obs["observation"]

    def step_wait(self):
        obs, rewards, terminated, truncated, infos = self.env.step(self.take_actions())
        dones = terminated | truncated
        game_infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for b in np.flatnonzero(dones):
            game_infos[b]["terminal_observation"] = infos["final_obs"][b]
            game_infos[b]["TimeLimit.truncated"] = bool(truncated[b])
        return obs["observation"], rewards, dones, game_infos

    def action_masks(self) -> np.ndarray:
        """bool[B, n_actions]: each game's legal learner actions."""
        return self.env.action_masks()

    def close(self) -> None:
        self.env.close()

    def get_attr(self, attr_name: str, indices=None) -> list:
        return [
            getattr(self, attr_name) if attr_name == "render_mode" else getattr(self.env, attr_name)
            for _ in self._get_indices(indices)
        ]

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == "action_masks" or hasattr(self.env, attr_name)
