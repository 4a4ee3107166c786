"""Single-agent self-play view of Sorry!: a gymnasium.Env over the compiled engine.

Each game the learner takes a random seat; every other seat is driven by an opponent drawn
from an :class:`~training.opponents.OpponentPool`. ``step`` plays the learner's move, then
the opponents' moves, until the learner must act again or the game ends.

The reward is the learner's own and nobody else's: +1 if the learner's side won (its seat, or
under team rules its partner's: the engine records the seat that made the winning move), -1
if the other side won, 0 otherwise (and on truncation). There is no per-agent reward table to
index with the wrong seat, which is how the PettingZoo/SB3 tutorial wrapper ended up
returning the opponent's reward.

Observations are policy input vectors (:mod:`agents.policy_input`: the env's observation
from the learner's seat, then the public engine state); legal actions come from
:meth:`SelfPlayEnv.action_masks` (the method sb3-contrib's MaskablePPO reads).
"""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from agents import Turn, make_agent
from agents.policy_input import INPUT_SIZE, policy_input
from sorry_env import engine as E
from sorry_env import game
from sorry_env.render import render_ansi
from sorry_env.rules import DEFAULT_MAX_TURNS, Rules, get_rules
from sorry_env.state_io import state_from_dict

from .opponents import OpponentPool


class SelfPlayEnv(gymnasium.Env):
    metadata = {"render_modes": ["ansi"]}

    def __init__(self, pool: OpponentPool, num_players: int = 2, rules: Rules | str = "hasbro2003",
                 max_turns: int = DEFAULT_MAX_TURNS,
                 render_mode: str | None = None):
        self.pool = pool
        self.rules = get_rules(rules)
        self.num_players = num_players
        self.seats = game.seats_for(num_players, rules=self.rules)
        self.max_turns = max_turns
        self.render_mode = render_mode
        self._rules_array = game.rules_array(self.rules)
        self._active = np.zeros(4, dtype=np.int64)
        self._active[list(self.seats)] = 1
        n_actions = game.num_actions(self.rules)
        self.observation_space = spaces.Box(-1.0, np.inf, (INPUT_SIZE,), dtype=np.float32)
        self.action_space = spaces.Discrete(n_actions)
        self._mask = np.zeros(n_actions, dtype=np.int8)
        self._obs = np.zeros(INPUT_SIZE, dtype=np.float32)
        self._scripted = {}  # agent name -> this env's own instance
        self.state = None
        self.learner_seat = -1
        self.opponents = {}  # seat -> label (agent name or snapshot_<k>)
        self._seat_agents = {}  # seat -> the agent playing it this game

    # -- gymnasium API ------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """New game. Options (for tests and analysis): ``state`` (a state dict, see
        sorry_env.state_io), ``learner_seat``, ``opponents`` (a label per other seat)."""
        super().reset(seed=seed)
        options = options or {}
        seed32 = int(self.np_random.integers(2**32))
        if "state" in options:
            self.state = state_from_dict(options["state"], self.rules, seed32)
            if tuple(s for s in range(4) if E.is_active(self.state, s)) != self.seats:
                raise ValueError(f"the state's seats differ from this env's seats {self.seats}")
        else:
            self.state = np.zeros(E.STATE_SIZE, dtype=np.int64)
            E.init_state(self.state, self._rules_array, self._active, seed32)
        self.learner_seat = int(options.get("learner_seat", self.seats[self.np_random.integers(len(self.seats))]))
        if self.learner_seat not in self.seats:
            raise ValueError(f"learner_seat must be one of {self.seats}, got {self.learner_seat}")
        others = [s for s in self.seats if s != self.learner_seat]
        labels = options.get("opponents") or [self.pool.draw(self.np_random) for _ in others]
        self.opponents = dict(zip(others, labels))
        # The agents themselves are held for the whole game: a snapshot that leaves the pool's
        # window mid-game must still play out this game.
        self._seat_agents = {seat: self._agent(label) for seat, label in self.opponents.items()}
        for agent in self._seat_agents.values():
            agent.reset(int(self.np_random.integers(2**31)))
        self._play_opponents()
        if E.winner(self.state) >= 0:
            raise ValueError("the game ended before the learner's first move")
        return self._observe(), {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        action = int(action)
        if not (0 <= action < self._mask.shape[0] and self._mask[action]):
            raise ValueError(f"illegal learner action {action}; legal: {np.flatnonzero(self._mask).tolist()}")
        E.step(self.state, self._rules_array, action)
        self._play_opponents()
        reward = self.learner_reward()
        terminated = bool(E.winner(self.state) >= 0)
        truncated = not terminated and E.turns_played(self.state) >= self.max_turns
        info = {}
        if terminated or truncated:
            info = {"learner_won": reward > 0, "learner_seat": self.learner_seat,
                    "opponents": sorted(self.opponents.values())}
        return self._observe(), reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (all False once the game is over)."""
        return self._mask.astype(bool)

    def render(self) -> str:
        return render_ansi(self.state, self.rules.pawns_per_player)

    # -- internals ----------------------------------------------------------------------
    def learner_reward(self) -> float:
        """+1 if the learner's side won (game.same_side: under team rules a win finished by the
        partner is the learner's too), -1 if the other side won, 0 while the game runs."""
        winner = int(E.winner(self.state))
        if winner < 0:
            return 0.0
        return 1.0 if game.same_side(self.rules, self.learner_seat, winner) else -1.0

    def _agent(self, label):
        if label.startswith("snapshot_"):
            return self.pool.snapshot(label)
        if label not in self._scripted:
            self._scripted[label] = make_agent(label, seed=int(self.np_random.integers(2**31)))
        return self._scripted[label]

    def _play_opponents(self):
        """Opponents move until the learner holds a card, the game ends or is truncated."""
        state = self.state
        while (E.winner(state) < 0 and E.to_move(state) != self.learner_seat
               and E.turns_played(state) < self.max_turns):
            seat = int(E.to_move(state))
            E.legal_mask(state, self._rules_array, self._mask)
            turn = Turn.from_state(state, self.rules, self.np_random, np.flatnonzero(self._mask))
            action = self._seat_agents[seat].act(turn)
            if not self._mask[action]:
                raise RuntimeError(f"opponent {self.opponents[seat]} chose illegal action {action}")
            E.step(state, self._rules_array, action)

    def _observe(self):
        if E.winner(self.state) >= 0 or E.turns_played(self.state) >= self.max_turns:
            self._mask[:] = 0
        else:
            E.legal_mask(self.state, self._rules_array, self._mask)
        policy_input(self.state, self._rules_array, self.learner_seat, self._obs)
        return self._obs.copy()
