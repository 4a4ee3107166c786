"""sorry_env: the board game Sorry! as a fast rules engine and a PettingZoo AEC environment.

- ``env()`` / ``raw_env()``: the PettingZoo environment (:mod:`sorry_env.board.env`);
  ``parallel_env()``: the same game through PettingZoo's Parallel API, turn-based
  (:mod:`sorry_env.parallel`).
- :mod:`sorry_env.board.game`: the engine as plain functions, for search and tools.
- :mod:`sorry_env.board.rules`: rule configurations and presets.
- ``gymnasium.make("sorry_env/Sorry-v1", num_players=2, opponents=["heuristic"])``: a
  single-agent Gymnasium env (one seat learns, agents play the others), defined in
  :mod:`sorry_env.gym_env` and registered here with the entry point
  :func:`sorry_env.agents.gym_factory.make_gym_env`, which turns opponent specs into agents
  (imported only when made: sorry_env never imports agents).
- :mod:`sorry_env.vector` and :mod:`sorry_env.vector_opponents`: batched envs (self-play, and
  one learner against compiled opponents).
- :mod:`sorry_env.games`: the game registry; every registered game's env is registered with
  PettingZoo under its ``GameType.env_id``.
"""

import gymnasium as _gymnasium

try:
    from pettingzoo import register as _register
except ImportError:  # PettingZoo 1.26 has no registry: pettingzoo.make needs 1.27, the env itself does not
    _register = None

from .extras import guard_module_run as _guard_module_run
from .numba_cache import clear_stale as _clear_stale

_guard_module_run()  # python -m sorry_env...: a missing extra ends the run with one line (extras)

_clear_stale("sorry_env", "sorry_env.board")  # the doors (vector envs) compile against the board game's engine

from .board import game, state_io
from .board.env import env, raw_env
from .board.rules import CARD_NAMES, PRESETS, Rules, get_rules
from .board.state_io import state_from_dict, state_to_dict
from .parallel import parallel_env
from .version import ENV_ID, ENV_VERSION, GYM_ENV_ID, LAYOUT_VERSION, __version__

__all__ = [
    "game",
    "state_io",
    "env",
    "raw_env",
    "parallel_env",
    "Rules",
    "PRESETS",
    "CARD_NAMES",
    "get_rules",
    "state_from_dict",
    "state_to_dict",
    "__version__",
    "ENV_ID",
    "GYM_ENV_ID",
    "ENV_VERSION",
    "LAYOUT_VERSION",
]

if _register is not None:
    from .games import other_builtin_game_types as _other_builtin_game_types

    _register("aec", ENV_ID, entry_point="sorry_env.board.env:env")  # the board game (sorry_env.version)
    _register("parallel", ENV_ID, entry_point="sorry_env.parallel:parallel_env")  # turn-based
    # Every other built-in game's env by its id (importing a game's module defines its compiled
    # code but compiles nothing).
    for _kind in _other_builtin_game_types():
        if _kind.env_entry_point:
            _register("aec", _kind.env_id, entry_point=_kind.env_entry_point)
# A string entry point: gymnasium imports the agents package (which turns opponent specs into
# agents) when the env is made, not here.
# Its vector entry point is the compiled batched env against compiled opponents (what
# gymnasium.make_vec returns without a vectorization_mode, or with "vector_entry_point").
if GYM_ENV_ID not in _gymnasium.registry:
    _gymnasium.register(
        id=GYM_ENV_ID,
        entry_point="sorry_env.agents.gym_factory:make_gym_env",
        vector_entry_point="sorry_env.vector_opponents:gym_vector_env",
    )
