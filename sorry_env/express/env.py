"""Sorry! Express as a PettingZoo AEC environment.

=====================  ==========================================================
Import                 ``from sorry_env.express import env, raw_env``
Registered id          ``pettingzoo.make("aec", "sorry_env/express-v0")`` after ``import sorry_env``
Actions                Discrete: 57
Parallel API           no (turn-based; a player acts once per die it resolves)
Manual control         no
Agents                 ``player_<seat>``, seats 0 .. n-1 (player k's home base starts as colour k)
Action shape           ()
Action values          0 .. 56
Observation shape      ``{"observation": (55,), "action_mask": (57,)}``
Observation values     observation in [0, 1] (float32); action_mask 0/1 (int8)
=====================  ==========================================================

The dice game Sorry! Express for 2 to 4 players. Each turn the player to move rolls three
dice and resolves them one at a time in an order of their choice (one step per die); a die
that can change nothing is skipped. The first player whose home section holds all four
pawns of its colour wins. Rules, with their sources, in ``docs/express.md``.

Arguments
---------
``raw_env(num_players=4, max_turns=DEFAULT_MAX_TURNS, render_mode=None)``

- ``num_players``: 2, 3 or 4.
- ``max_turns``: truncate every agent once this many turns (rolls, not dice) are finished
  (``sorry_env.express.game.DEFAULT_MAX_TURNS``). ``None`` disables truncation.
- ``render_mode``: ``"ansi"`` returns the position as text from ``render()``.

Observation
-----------
Player-relative: the observing seat first, then the other seats in turn order; colours are
absolute. Index ranges in :mod:`sorry_env.express.engine` and ``docs/express.md``.
``action_mask`` is 1 exactly on the legal actions of the player to move (all zero for the
others and after the game ends).

Action space
------------
One action resolves one die: the face (dice showing the same face are interchangeable) and
the choice for it (source, victim, base and colour). Layout in
:mod:`sorry_env.express.engine`; ``describe_action(a)`` names an action in words.

Rewards
-------
+1 to the winner, -1 to every other player, checked after every die; zero otherwise and zero
for everybody on truncation.

Reset options
-------------
``reset(seed=None, options={"state": STATE})`` starts from a state dict
(:mod:`sorry_env.express.state_io`). The seed drives every roll and, for new games, chooses
the first player. ``env.unwrapped.state_dict()`` returns the current state dict.

Errors
------
``raw_env.step`` raises ``ValueError`` naming an illegal or out-of-range action and the legal
ones; ``env()`` applies PettingZoo's TerminateIllegalWrapper instead (the offender gets -1
and the game ends). A malformed state in ``reset`` raises ``ValueError`` and leaves the env
as it was.

Version history
---------------
- v0: first release.
"""

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from ..aec_checks import StepChecks
from ..game import check_seed
from ..game_env import wrap_env
from . import engine as E
from . import game
from .game import DEFAULT_MAX_TURNS
from .state_io import state_from_dict, state_to_dict


def env(**kwargs):
    """The raw env with PettingZoo's standard classic-game wrappers."""
    return wrap_env(raw_env(**kwargs))


class raw_env(StepChecks, AECEnv):
    metadata: ClassVar[dict] = {
        "render_modes": ["ansi"],
        "name": game.GAME_TYPE.layout_name,
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(self, num_players=4, max_turns=DEFAULT_MAX_TURNS, render_mode=None):
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        if max_turns is not None and (
            isinstance(max_turns, bool) or not isinstance(max_turns, (int, np.integer)) or max_turns < 1
        ):
            raise ValueError(f"max_turns must be a positive integer or None, got {max_turns!r}")
        self.num_players = game.check_players(num_players)
        self.max_turns = max_turns if max_turns is not None else np.iinfo(np.int64).max
        self.render_mode = render_mode
        self.possible_agents = [f"player_{s}" for s in range(self.num_players)]
        self._agent_seat = {a: s for s, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (E.OBS_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (E.N_ACTIONS,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(E.N_ACTIONS) for a in self.possible_agents}
        self._state = None
        self._mask = np.zeros(E.N_ACTIONS, dtype=np.int8)

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # -- lifecycle ------------------------------------------------------------------------
    def reset(self, seed=None, options=None):
        if seed is None:
            seed32 = int(np.random.SeedSequence().generate_state(1)[0])
        else:
            check_seed(seed)
            seed32 = int(np.random.SeedSequence(seed).generate_state(1)[0])
        options = options or {}  # other keys are ignored, as Gymnasium envs do
        if "state" in options:
            state = state_from_dict(options["state"], seed32)
            if state[E.N_PLAYERS] != self.num_players:
                raise ValueError(f"the state has {int(state[E.N_PLAYERS])} players; this env has {self.num_players}")
        else:
            state = np.zeros(E.STATE_SIZE, dtype=np.int64)
            E.init_state(state, self.num_players, -1, seed32)
        self._state = state
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = f"player_{int(state[E.TO_MOVE])}"
        if state[E.TURN] >= self.max_turns:  # a loaded position already at the limit
            self.truncations = {a: True for a in self.agents}
            self._mask[:] = 0
        else:
            E.legal_mask(state, self._mask)

    def _refuse_action(self, action) -> None:
        game.check_action(self._state, action)  # raises, naming the legal actions

    def step(self, action):
        agent = self._acting_agent(action, E.N_ACTIONS)
        if agent is None:
            return
        state = self._state
        E.step(state, int(action))
        self._cumulative_rewards[agent] = 0.0
        winner = state[E.WINNER]
        if winner >= 0:
            for a in self.agents:
                self.rewards[a] = 1.0 if self._agent_seat[a] == winner else -1.0
                self.terminations[a] = True
            self._mask[:] = 0
        else:
            for a in self.agents:
                self.rewards[a] = 0.0
            if state[E.TURN] >= self.max_turns:
                for a in self.agents:
                    self.truncations[a] = True
                self._mask[:] = 0
            else:
                E.legal_mask(state, self._mask)
        self.agent_selection = f"player_{int(state[E.TO_MOVE])}"
        self._accumulate_rewards()

    def observe(self, agent):
        if agent not in self._agent_seat:
            raise ValueError(f"unknown agent {agent!r}; agents are {self.possible_agents}")
        obs = np.empty(E.OBS_SIZE, dtype=np.float32)
        E.observe(self._game(), self._agent_seat[agent], obs)
        if agent == self.agent_selection:
            mask = self._mask.copy()
        else:
            mask = np.zeros(E.N_ACTIONS, dtype=np.int8)
        return {"observation": obs, "action_mask": mask}

    def render(self):
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode; pass render_mode='ansi'")
            return None
        return game.render_text(self._game())

    def close(self):
        pass

    # -- engine access --------------------------------------------------------------------
    def state_dict(self):
        """The current position as a JSON-able state dict (see sorry_env.express.state_io)."""
        return state_to_dict(self._game())

    @property
    def state_array(self):
        """A copy of the engine state array (for agents: sorry_env.express.game functions)."""
        return self._game().copy()

    def describe_action(self, action):
        return game.describe_action(self._game(), action)


raw_env.__doc__ = __doc__  # help(sorry_env.express.raw_env) shows the full reference
