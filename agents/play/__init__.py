"""Human play against the agents: the terminal game (:mod:`.terminal`, ``sorry-play``) and
the browser game (:mod:`.serve`, ``sorry-serve``). ``python -m sorry_env.agents.play`` is
``sorry-play``."""
