"""Agents for Sorry! Express (:mod:`sorry_env.express`): random, greedy, and by the board game's
names ``heuristic``, ``expectimax`` and ``montecarlo`` (:mod:`sorry_env.agents.express_search`) and
trained policy files (:mod:`sorry_env.agents.express_policy`); :func:`make_express_agent` builds one
from a spec.

They share the interface of :mod:`sorry_env.agents.base` (``reset(seed)``, ``act(turn)``) but act on an
:class:`ExpressTurn`, built with :meth:`ExpressTurn.from_state`, the one way to make one from
a real game: it hides the generator that will roll the next dice.

``greedy`` tries every legal action with the engine (one die at a time, so dice resolved
earlier in the turn count) and keeps the first, in action order, whose result ranks highest
by, in this order: a win of its own (a loss to another player's win ranks last), its home
section count, its largest holding of one colour (a Slide can make that its home section),
its number of pawns, and last the largest opponent home section (smaller is better).
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from sorry_env.express import engine as E
from sorry_env.express import game

from . import ALIASES
from . import _settings as spec_settings
from .base import Agent
from .express_search import ExpressExpectimaxAgent, ExpressHeuristicAgent, ExpressMonteCarloAgent
from .random_agent import RandomAgent


@dataclasses.dataclass(frozen=True)
class ExpressTurn:
    """What an Express agent is shown when it must act."""

    state: np.ndarray  # the game with the dice generator re-drawn (future rolls hidden)
    seat: int
    legal: np.ndarray  # legal action indices, ascending

    @classmethod
    def from_state(cls, state: np.ndarray, rng: np.random.Generator, legal: np.ndarray | None = None) -> ExpressTurn:
        """The turn of the seat to move in the true game `state`, its generator re-drawn from
        `rng` so the agent cannot see the next rolls. `legal` may pass the legal actions when
        the caller already has them."""
        if legal is None:
            legal = game.legal_actions(state)
        public = state.copy()
        public[E.RNG] = int(rng.integers(0, 2**32))
        return cls(public, int(state[E.TO_MOVE]), np.asarray(legal, dtype=np.int64))

    def observation(self) -> dict:
        """The env's observation dict for this seat (for policy agents)."""
        obs = np.empty(E.OBS_SIZE, dtype=np.float32)
        E.observe(self.state, self.seat, obs)
        mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
        mask[self.legal] = 1
        return {"observation": obs, "action_mask": mask}


# Lexicographic weights of the greedy ranking: each term is at most 16, below the next weight.
WIN = 10**6


def greedy_score(state: np.ndarray, seat: int) -> int:
    """How good `state` is for `seat` by the greedy ranking (higher is better)."""
    w = int(state[E.WINNER])
    if w >= 0:
        return WIN if w == seat else -WIN
    own = state[E.OWNED + seat * E.N_COLOURS : E.OWNED + (seat + 1) * E.N_COLOURS]
    home = int(E.home_count(state, seat))
    rival = max(int(E.home_count(state, other)) for other in range(int(state[E.N_PLAYERS])) if other != seat)
    return home * 10_000 + int(own.max()) * 1_000 + int(own.sum()) * 10 - rival


class ExpressGreedyAgent(Agent):
    name = "greedy"
    plays_express = True

    def __init__(self, seed=None):
        self.reset(seed)

    def act(self, turn: ExpressTurn) -> int:
        if len(turn.legal) == 1:
            return int(turn.legal[0])
        child = np.empty_like(turn.state)
        best_action, best = int(turn.legal[0]), None
        for action in turn.legal:
            child[:] = turn.state
            E.step(child, int(action))
            score = greedy_score(child, turn.seat)
            if best is None or score > best:
                best_action, best = int(action), score
        return best_action


class ExpressRandomAgent(RandomAgent):
    """Uniformly random legal play (it reads only ``turn.legal``, so the board game's works)."""

    plays_express = True


EXPRESS_AGENTS = {
    "random": ExpressRandomAgent,
    "greedy": ExpressGreedyAgent,
    "heuristic": ExpressHeuristicAgent,
    "expectimax": ExpressExpectimaxAgent,
    "montecarlo": ExpressMonteCarloAgent,
}


def make_express_agent(spec: str, seed=None) -> Agent:
    """An Express agent from a spec, parsed as the board game's (:func:`agents.make_agent`):

    - a name of EXPRESS_AGENTS (``mcts`` is an alias of ``montecarlo``), with optional
      ``name:key=value,...`` settings passed to its constructor: ``"expectimax:depth=3"``;
      a setting it does not have, or a value of the wrong kind, is refused with its name;
    - an Express policy file (``*.safetensors``, :mod:`sorry_env.agents.express_policy`); a board-game
      policy file is refused with a message saying so."""
    if not isinstance(spec, str):
        raise TypeError(f"an Express agent spec is text, got {spec!r}")
    name, _, settings = spec.partition(":")
    name = ALIASES.get(name, name)
    if name in EXPRESS_AGENTS:
        maker = EXPRESS_AGENTS[name]
        return maker(seed=seed, **spec_settings(maker, name, spec, settings))
    if spec.endswith(".safetensors") or os.path.isfile(spec):
        from .express_policy import ExpressPolicyAgent  # imports torch: only when a policy is asked for

        return ExpressPolicyAgent(spec, seed=seed)
    raise ValueError(
        f"unknown Express agent {name!r}; choose from {sorted(EXPRESS_AGENTS)} (or the aliases {sorted(ALIASES)}) "
        "or an Express policy file (.safetensors)"
    )


def express_action_for(raw, agent, rng: np.random.Generator | None = None) -> int:
    """The action `agent` (an Agent or a spec) chooses for the player to move in a Sorry!
    Express env (``raw``: the unwrapped :class:`sorry_env.express.env.raw_env`); what
    :func:`agents.action_for` does for an Express env."""
    if isinstance(agent, str):
        agent = make_express_agent(agent)
    elif not isinstance(agent, Agent) or not getattr(agent, "plays_express", False):
        raise ValueError(
            f"{agent!r} is not a Sorry! Express agent; name one ({sorted(EXPRESS_AGENTS)} or an Express "
            "policy file) or pass an object of agents.express.make_express_agent"
        )
    state = raw.state_array
    mover = raw.agent_selection
    if not raw.agents or raw.terminations.get(mover) or raw.truncations.get(mover):
        raise ValueError("the game is over (won or truncated): nobody is to move")
    legal = game.legal_actions(state)
    agent.check_game("express", game.num_players(state))
    turn = ExpressTurn.from_state(state, rng if rng is not None else np.random.default_rng(), legal)
    action = agent.act(turn)
    if action not in legal:
        raise ValueError(f"agent {agent.name!r} chose illegal action {action!r}; legal: {legal.tolist()}")
    return int(action)


# The interface of agents.GAME_AGENT_MODULES (agents.agents_of_game("express")).
make_agent = make_express_agent
action_for = express_action_for
