"""sorry_env: the board game Sorry! as a fast rules engine and a PettingZoo AEC environment.

- ``env()`` / ``raw_env()``: the PettingZoo environment (:mod:`sorry_env.env`).
- :mod:`sorry_env.game`: the engine as plain functions, for search and tools.
- :mod:`sorry_env.rules`: rule configurations and presets.
- :mod:`sorry_env.express`: Sorry! Express, the dice game, as its own env (``sorry_env/express-v0``).
"""
import pathlib as _pathlib

from pettingzoo import register as _register

from .numba_cache import clear_stale as _clear_stale

_clear_stale(_pathlib.Path(__file__).parent)

from .env import env, raw_env
from .rules import CARD_NAMES, PRESETS, Rules, get_rules
from .state_io import state_from_dict, state_to_dict

__all__ = ["env", "raw_env", "Rules", "PRESETS", "CARD_NAMES", "get_rules", "state_from_dict", "state_to_dict"]
__version__ = "0.1.0"

_register("aec", "sorry_env/sorry-v0", entry_point="sorry_env.env:env")
_register("aec", "sorry_env/express-v0", entry_point="sorry_env.express.env:env")
