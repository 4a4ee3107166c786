"""Sorry! Express, the dice game, as its own rules engine and PettingZoo AEC environment.

- ``env()`` / ``raw_env()``: the PettingZoo environment (:mod:`sorry_env.express.env`),
  registered as ``sorry_env/express-v0``.
- :mod:`sorry_env.express.game`: the engine as plain functions, for agents and tools.
- :mod:`sorry_env.express.state_io`: state dicts.
- :mod:`sorry_env.express.express_game`: its registration in :mod:`sorry_env.games` (its facts,
  ``GAME_TYPE``, are in :mod:`sorry_env.express.game`).
- :mod:`sorry_env.express.agents`: its own agents (heuristic, expectimax, montecarlo) and the
  evaluation the generic greedy ranks by; ``sorry_env.agents.make_agent(spec, game="express")``.

Rules, action and observation layouts: ``docs/express.md``.
"""

from ..numba_cache import clear_stale as _clear_stale

_clear_stale("sorry_env.express", "sorry_env")  # its engine compiles sorry_env.generator (see numba_cache)

from .env import env, raw_env
from .game import DEFAULT_MAX_TURNS, FACE_NAMES
from .state_io import state_from_dict, state_to_dict

__all__ = ["DEFAULT_MAX_TURNS", "FACE_NAMES", "env", "raw_env", "state_from_dict", "state_to_dict"]
