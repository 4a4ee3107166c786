"""Old name of :mod:`sorry_env.agents.montecarlo` (a flat Monte Carlo search, not a tree search), kept so
that old imports and the ``mcts`` agent spec keep working."""

from .montecarlo import *  # noqa: F403  (every public name, under the old module path)
from .montecarlo import MonteCarloAgent as MCTSAgent  # noqa: F401
