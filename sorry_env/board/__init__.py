"""The board game Sorry!: its rules engine, presets, observation, state dicts, rendering and
AEC env, registered as ``"sorry"`` in :mod:`sorry_env.games` (:mod:`sorry_env.board.board_game`).
The package's top level re-exports its public names (``sorry_env.env``, ``raw_env``, ``PRESETS``...)."""

from ..numba_cache import clear_stale as _clear_stale

_clear_stale("sorry_env.board", "sorry_env")  # its engine compiles sorry_env.generator (see numba_cache)
