"""Self-play training and evaluation for sorry_env (see :mod:`sorry_env.agents.arena`)."""

from sorry_env.numba_cache import clear_stale

# training compiles code (outcome_data, search_teacher) that inlines the engine and the
# agents' compiled helpers: recompile when any of them changes (sorry_env.numba_cache).
clear_stale("sorry_env.training", "sorry_env", "sorry_env.board", "sorry_env.agents")
