"""OpenSpiel's search bots as agents: ``openspiel_mcts`` (``MCTSBot``) and ``openspiel_ismcts``
(``ISMCTSBot``), searching the ``python_sorry`` game of :mod:`sorry_env.openspiel`.

Specs: ``"openspiel_mcts:simulations=200,uct_c=2.0"``, ``"openspiel_ismcts:simulations=200"``.
Both need ``open_spiel``, the ``openspiel`` extra (``pip install "sorry-env[openspiel]"``; the
test extra has it too); it is imported when the agent is made, so the other agents work without it.

The bot searches from the agent's :class:`~agents.base.Turn`, whose hidden parts (the draw
order; with hands the other hands) are already re-drawn (:func:`sorry_env.agents.base.public_view`):
MCTSBot searches that one determinization, ISMCTSBot re-deals the hidden cards in every
simulation (``resample_from_infostate``). Leaves are valued by ``rollouts`` uniformly random
playouts to the end of the game (``rollout="engine"``: the compiled engine plays them, the same
random policy as OpenSpiel's RandomRolloutEvaluator; ``rollout="python"``: OpenSpiel's own
evaluator, about a hundred times slower).
"""

from __future__ import annotations

import numpy as np

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.rules import PRESETS, Rules
from sorry_env.extras import extra_for, needs_extra_line

from .base import ChoosingAgent, Turn


def _pyspiel():
    try:
        import pyspiel

        import sorry_env.openspiel  # noqa: F401  (registers python_sorry)
    except ModuleNotFoundError as missing:
        if extra_for(missing) is None:
            raise
        raise ValueError(needs_extra_line("the OpenSpiel agents", missing)) from None
    return pyspiel


class EngineRolloutEvaluator:
    """OpenSpiel Evaluator: the mean result of `rollouts` uniformly random playouts, played by
    the compiled engine from the first decision after `state` (chance nodes on the way are
    sampled with their probabilities)."""

    def __init__(self, rollouts: int, rng: np.random.Generator):
        self.rollouts = rollouts
        self.rng = rng

    def _decision_or_end(self, state):
        working = state.clone()
        while working.is_chance_node():
            outcomes, probs = zip(*working.chance_outcomes())
            working.apply_action(int(outcomes[self.rng.choice(len(outcomes), p=probs)]))
        return working

    def evaluate(self, state) -> np.ndarray:
        working = self._decision_or_end(state)
        if working.is_terminal():
            return np.array(working.returns())
        setup = working._game
        total = np.zeros(len(setup.seats))
        for _ in range(self.rollouts):
            world = working.engine_state
            E.seed_generator(world, int(self.rng.integers(0, 2**32)))
            E.shuffle_draw_pile(world, setup.rules_array)  # the pile's order in a state is not a real shuffle
            E.random_playout(world, setup.rules_array, setup.max_turns)
            total += setup.returns(world)
        return total / self.rollouts

    def prior(self, state) -> list[tuple[int, float]]:
        if state.is_chance_node():
            return state.chance_outcomes()
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class _OpenSpielAgent(ChoosingAgent):
    """Shared set-up: one python_sorry game per rules and player count, a bot per game."""

    kind = ""

    def __init__(
        self,
        simulations: int = 100,
        uct_c: float = 2.0,
        rollouts: int = 1,
        rollout: str = "engine",
        seed: int | None = None,
    ):
        if simulations < 1 or rollouts < 1:
            raise ValueError(f"simulations and rollouts must be positive, got {simulations} and {rollouts}")
        if not uct_c > 0:
            raise ValueError(f"uct_c must be positive, got {uct_c}")
        if rollout not in ("engine", "python"):
            raise ValueError(f"rollout must be 'engine' or 'python', got {rollout!r}")
        self.pyspiel = _pyspiel()
        self.simulations, self.uct_c, self.rollouts, self.rollout = simulations, uct_c, rollouts, rollout
        self.name = f"openspiel_{self.kind}"
        self._games: dict = {}
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._bots: dict = {}  # rebuilt from the new generator

    def check_game(self, rules: Rules, num_players: int) -> None:
        if PRESETS.get(rules.name) != rules:
            raise ValueError(f"{self.name} plays the presets only (python_sorry's rules parameter); got {rules.name!r}")
        game.seats_for(num_players, None, rules)

    def _game_and_bot(self, rules: Rules, num_players: int):
        key = (rules.name, num_players)
        if key not in self._games:
            self.check_game(rules, num_players)
            params = {"players": num_players, "rules": rules.name}
            self._games[key] = self.pyspiel.load_game("python_sorry", params)
        if key not in self._bots:
            self._bots[key] = self._make_bot(self._games[key])
        return self._games[key], self._bots[key]

    def _make_bot(self, spiel_game):
        """The OpenSpiel bot playing `spiel_game` (each kind builds its own)."""
        raise NotImplementedError

    def _evaluator(self):
        if self.rollout == "engine":
            return EngineRolloutEvaluator(self.rollouts, self.rng)
        from open_spiel.python.algorithms.mcts import RandomRolloutEvaluator

        return RandomRolloutEvaluator(self.rollouts, self._random_state())

    def _random_state(self) -> np.random.RandomState:
        """A generator of numpy's legacy kind (what OpenSpiel takes), seeded from the agent's."""
        return np.random.RandomState(self.rng.integers(0, 2**31))

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        spiel_game, bot = self._game_and_bot(turn.rules, turn.num_players)
        state = spiel_game.state_from_engine(turn.state)
        return int(bot.step(state))


class OpenSpielMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's MCTSBot (UCT over one determinization of the hidden cards)."""

    kind = "mcts"

    def _make_bot(self, spiel_game):
        from open_spiel.python.algorithms.mcts import MCTSBot

        return MCTSBot(
            spiel_game,
            self.uct_c,
            self.simulations,
            self._evaluator(),
            solve=False,
            random_state=self._random_state(),
        )


class OpenSpielISMCTSAgent(_OpenSpielAgent):
    """OpenSpiel's ISMCTSBot (information-set MCTS: the hidden cards re-dealt every simulation)."""

    kind = "ismcts"

    def _make_bot(self, spiel_game):
        from open_spiel.python.algorithms.ismcts import ISMCTSBot

        return ISMCTSBot(
            spiel_game,
            self._evaluator(),
            self.uct_c,
            self.simulations,
            random_state=self._random_state(),
        )
