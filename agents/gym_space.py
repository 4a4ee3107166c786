"""Deprecated: moved to :mod:`sorry_env.gym_space` (the board game's code lives with the game).
Importing this name warns once and gives that module itself (one module object)."""

from sorry_env import gym_space as _moved

from ._moved import alias

alias(__name__, _moved)
