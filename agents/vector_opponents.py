"""Deprecated: moved to :mod:`sorry_env.vector_opponents` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

from sorry_env import vector_opponents as _moved

from ._moved import alias

alias(__name__, _moved)
