"""The observation space of the Gymnasium env (:mod:`sorry_env.gym_env`) and what it records about
its game, apart from the env so a saved model can be checked (:mod:`sorry_env.agents.sb3_agent`)
without importing the env."""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from sorry_env.board import game
from sorry_env.board.observation import OBS_SIZE
from sorry_env.version import GYM_ENV_ID

from .board.policy_input import INPUT_SIZE, layout, rules_dict

ENV_ID = GYM_ENV_ID  # one home: sorry_env/version.py


def game_tag(rules, num_players: int) -> dict:
    """What an observation space records about its game (sb3 saves it with a model as plain
    JSON, so :mod:`sorry_env.agents.sb3_agent` can check a model against a game without unpickling)."""
    return {"env": ENV_ID, "layout": layout(rules), "rules": rules_dict(rules), "num_players": int(num_players)}


# What a flat observation vector (a Box space, not the env's Dict) holds: the env's observation,
# or the trained policies' input (observation + the learner's own view of the state array).
FLAT_INPUTS = ("observation", "policy_input")


def flat_tag(rules, num_players: int, kind: str) -> dict:
    """The game record of a flat observation vector of `kind` (one of FLAT_INPUTS): the
    batched envs' Box space carries it, so a model trained on them is checked and played as
    one trained on the env's Dict observation is."""
    if kind not in FLAT_INPUTS:
        raise ValueError(f"a flat observation is one of {FLAT_INPUTS}, not {kind!r}")
    return {**game_tag(rules, num_players), "input": kind}


def flat_space(rules, num_players: int, kind: str) -> spaces.Box:
    """The Box of a flat observation vector of `kind` (FLAT_INPUTS) for a game, recording the
    game (:func:`flat_tag`)."""
    tag = flat_tag(rules, num_players, kind)
    low, high, width = (-1.0, np.inf, INPUT_SIZE) if kind == "policy_input" else (0.0, 1.0, OBS_SIZE)
    space = spaces.Box(low, high, (width,), dtype=np.float32)
    space.sorry_game = tag  # type: ignore[attr-defined]  # saved with the space
    return space


def observation_space(rules, num_players: int, observation: spaces.Box | None = None) -> spaces.Dict:
    """The observation space of the env (and of the PettingZoo env) for a game: the
    observation dict, its ``observation`` the env's Box or `observation` (the compiled
    opponents' env gives its flat vector's, :func:`flat_space`)."""
    if observation is None:
        observation = spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32)
    action_mask = spaces.Box(0, 1, (game.num_actions(rules),), dtype=np.int8)
    space = spaces.Dict({"observation": observation, "action_mask": action_mask})
    space.sorry_game = game_tag(rules, num_players)  # type: ignore[attr-defined]  # saved with the space
    return space
