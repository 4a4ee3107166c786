"""Deprecated: moved to :mod:`sorry_env.simulate` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

import sys
import warnings

from sorry_env import simulate as _moved

warnings.warn(
    "sorry_env.agents.simulate moved to sorry_env.simulate; import it from there",
    DeprecationWarning,
    stacklevel=2,
)
sys.modules[__name__] = _moved
