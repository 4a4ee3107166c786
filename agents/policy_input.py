"""Deprecated: moved to :mod:`sorry_env.policy_input` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

import sys
import warnings

from sorry_env import policy_input as _moved

warnings.warn(
    "sorry_env.agents.policy_input moved to sorry_env.policy_input; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
