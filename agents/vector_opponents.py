"""Deprecated: moved to :mod:`sorry_env.vector_opponents` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

import sys
import warnings

from sorry_env import vector_opponents as _moved

warnings.warn(
    "sorry_env.agents.vector_opponents moved to sorry_env.vector_opponents; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
