"""PettingZoo wrappers for libraries that want the observation dict under other names.

:class:`ObservationKeys` renames the env's ``{"observation", "action_mask"}`` dict and casts the
mask, e.g. for RLlib's ``ActionMaskingTorchRLModule``, which reads ``"observations"`` and a
float mask (docs/integrations.md, "RLlib's own PettingZooEnv")::

    from sorry_env import env
    from sorry_env.wrappers import ObservationKeys

    aec = ObservationKeys(env(num_players=2), observation="observations", mask_dtype="float32")
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper


class ObservationKeys(BaseWrapper):
    """The wrapped env's observation dict with the keys renamed (``observation`` and
    ``action_mask`` are the new names of the env's two keys) and the mask cast to
    ``mask_dtype``. Everything else passes through."""

    def __init__(self, env, observation: str = "observations", action_mask: str = "action_mask", mask_dtype="float32"):
        super().__init__(env)
        for what, key in (("observation", observation), ("action_mask", action_mask)):
            if not isinstance(key, str) or not key:
                raise ValueError(f"{what} key must be a non-empty string, got {key!r}")
        if observation == action_mask:
            raise ValueError(f"the two keys must differ, got {observation!r} twice")
        dtype = np.dtype(mask_dtype)
        if dtype.kind not in "iuf":
            raise ValueError(f"mask_dtype must be a numeric dtype, got {mask_dtype!r}")
        self._keys = (observation, action_mask)
        self._mask_dtype = dtype
        self._spaces: dict = {}

    def observation_space(self, agent: str) -> spaces.Dict:
        if agent not in self._spaces:
            inner = self.env.observation_space(agent)
            mask = inner["action_mask"]
            self._spaces[agent] = spaces.Dict(
                {
                    self._keys[0]: inner["observation"],
                    self._keys[1]: spaces.Box(0, 1, mask.shape, dtype=self._mask_dtype),
                }
            )
        return self._spaces[agent]

    def observe(self, agent: str) -> dict:
        obs = self.env.observe(agent)
        return {self._keys[0]: obs["observation"], self._keys[1]: obs["action_mask"].astype(self._mask_dtype)}
