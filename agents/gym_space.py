"""Deprecated: moved to :mod:`sorry_env.gym_space` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

import sys
import warnings

from sorry_env import gym_space as _moved

warnings.warn(
    "sorry_env.agents.gym_space moved to sorry_env.gym_space; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
