"""Deprecated: moved to :mod:`sorry_env.evaluation` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

import sys
import warnings

from sorry_env import evaluation as _moved

warnings.warn(
    "sorry_env.agents.evaluation moved to sorry_env.evaluation; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
