"""The self-play trainer's batched rollouts: B learner games stepped together, as an SB3 VecEnv.

One env for every registered game: ``SelfPlayEnv(game, num_players, max_turns, B, pool,
seed)`` steps any game over its functional API (:class:`sorry_env.games.Game`; the rollouts of
:mod:`sorry_env.training.game_ppo`), and its subclass for the board game,
``BatchedSelfPlayEnv(cfg, pool, seed)``, replaces the game's steps (moves, lone moves,
scripted opponents, views, outcomes) with compiled loops over all the games; the same seed
deals and plays the same games on both wherever no opponent is compiled.
``BatchedSelfPlayEnv`` plays ``cfg["envs"]`` games at once for
MaskablePPO (``n_envs = B``), with the per-game trainer env's semantics
(:func:`sorry_env.training.train.make_env`: ``PolicyInputWrapper(SorryGymEnv(opponent_sampler=pool.sample))``):

- each episode the learner takes a random seat of the game, and each other seat draws its own
  opponent from the pool (:meth:`sorry_env.training.opponents.OpponentPool.sample`: the mix's agents
  and the learner's snapshots), held for the whole episode;
- observations are policy inputs float32[B, INPUT_SIZE] (:mod:`sorry_env.board.policy_input`) of the
  learner's seat; ``action_masks()`` bool[B, n_actions] its legal actions;
- the reward is the learner's: +1 when its side won (team rules: a partner's win pays the
  learner), -1 when another side won, 0 before the end and on truncation (``max_turns``);
- a game that ends is restarted in the same step (SB3's convention): ``dones[b]`` is True,
  ``infos[b]["terminal_observation"]`` holds the finished game's last observation,
  ``infos[b]["TimeLimit.truncated"]`` and ``infos[b]["episode"]`` (Monitor's ``r``, ``l``,
  ``t``) are set.

How the opponents move:

- ``random``, ``greedy`` and ``heuristic`` (by those exact names) move inside one compiled
  loop over all games (:func:`sorry_env.vector_opponents.play_opponents`, the batched env's
  compiled opponents; greedy and heuristic choose as their agents do);
- policy networks (snapshots, policy files in the mix) are evaluated in batches: each round,
  every game whose seat to move is played by the same network gets one forward of that
  network for all of them (``forwards`` counts them);
- an agent object that acts in batches (``acts_in_batches``, e.g. sorry-bench's frozen
  networks added with ``OpponentPool.add_agent``) is shared by every game and gets one
  ``act_turns`` call a round for all the games waiting on it;
- any other agent (``expectimax``, ``montecarlo``, your own) is asked per move with
  :meth:`agents.Turn.from_state`, one instance per game and spec;
- a seat with a single legal move plays it without asking anyone.

Reproducible under the seed: one generator (``numpy.random.default_rng(seed)``) draws, game by
game in index order, every episode's engine seed, learner seat and opponents, and the
snapshots' sampled moves; the compiled opponents draw from per-game generators seeded from
it. The same seed, config, pool and learner actions give the same games (for the same B: the
games draw from one generator in turn).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from numba import njit
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from sorry_env import vector as V
from sorry_env.agent import GameTurn, agent_turn, checked_action
from sorry_env.agents import ALIASES, Turn, as_agent, is_import_spec
from sorry_env.agents.catalog import policy_game
from sorry_env.agents.policy import PolicyAgent, masked_logits
from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS
from sorry_env.board.observation import OBS_SIZE
from sorry_env.games import seats_after
from sorry_env.vector_opponents import OPPONENT_KINDS, play_opponents, write_own_view

from .opponents import OpponentPool
from .sb3_policy import actor_logits
from .vector_sb3 import BatchVecEnvMethods

LEARNER = -1  # seat code of the learner's seat (and of seats not in play)
EXTERNAL = len(OPPONENT_KINDS)  # seat codes >= EXTERNAL: agent EXTERNAL + k of the registry


# ---- compiled per-batch steps ---------------------------------------------------------------
@njit(cache=True)
def apply_actions(states, rules, games, actions):
    """Play actions[k] in game games[k]."""
    for k in range(games.shape[0]):
        E.step(states[games[k]], rules, actions[k])


@njit(cache=True)
def advance(states, rules, seat_codes, weights, learners, rngs, max_turns, waiting):
    """Play every game's compiled opponents (and lone legal moves) until the learner holds a
    card, the game is over, or the seat to move is played by an agent outside the compiled
    loop: waiting[b] := that seat's code (>= EXTERNAL), else -1. Returns how many games wait."""
    buf = np.empty(E.num_actions(rules), dtype=np.int64)
    view = np.empty(states.shape[1], dtype=np.int64)
    count = 0
    for b in range(states.shape[0]):
        state = states[b]
        play_opponents(b, state, rules, seat_codes[b], weights, learners[b], rngs, max_turns, buf, view)
        waiting[b] = -1
        if E.is_running(state, max_turns) and E.to_move(state) != learners[b]:
            waiting[b] = seat_codes[b, E.to_move(state)]
            count += 1
    return count


@njit(cache=True)
def policy_inputs(states, rules, max_turns, games, seats, inputs, masks):
    """inputs[b] := the policy input of seat seats[k] in game b = games[k] (nothing it cannot
    see); masks[b] := the legal actions (none once the game is over)."""
    for k in range(games.shape[0]):
        b = games[k]
        V.write_view(states[b], rules, seats[k], max_turns, inputs[b, :OBS_SIZE], masks[b])
        write_own_view(states[b], rules, seats[k], True, inputs[b])


@njit(cache=True)
def outcomes(states, rules, learners, max_turns, rewards, terminated, truncated):
    """Rewards and end flags of every game after the opponents' replies."""
    for b in range(states.shape[0]):
        winner = E.winner(states[b])
        terminated[b] = winner >= 0
        truncated[b] = winner < 0 and V.is_over(states[b], max_turns)
        rewards[b] = V.seat_reward(rules, learners[b], winner)


# ---- the VecEnv -------------------------------------------------------------------------------
class LearnerPolicy:
    """The learner's own network in memory as an opponent (game_ppo's ``self``, added to the
    pool with ``OpponentPool.add_agent``): its sampled moves, played in batches like a policy
    file's, with the weights of the moment."""

    sample = True
    name = "self"

    def __init__(self, actor):
        self.actor = actor

    def check_game(self, rules, num_players: int) -> None:
        pass


NETWORKS = (PolicyAgent, LearnerPolicy)  # opponents played by one batched forward per round


class SelfPlayEnv(BatchVecEnvMethods, VecEnv):
    """B self-play learner games of any registered game (`game`, a
    :class:`sorry_env.games.Game`, for `num_players`) stepped together over its functional API,
    opponents drawn from `pool`, for MaskablePPO: the module docstring's semantics, every
    opponent moving outside a compiled loop (:class:`BatchedSelfPlayEnv` adds the board game's
    compiled one). Observations are the learner's :meth:`sorry_env.games.Game.policy_input`."""

    compiled_kinds: tuple[str, ...] = ()  # opponent names played inside a compiled loop (seat codes < EXTERNAL)
    observation_low = -np.inf

    def __init__(self, game, num_players: int, max_turns: int, num_envs: int, pool: OpponentPool, seed=None):
        self.game = game
        first = game.new_state(num_players)
        self.seats = tuple(game.seats(first))
        self.num_players = len(self.seats)
        self.max_turns = int(max_turns)
        self.pool = pool
        self.n_actions = game.num_actions
        B = V.check_num_envs(num_envs)
        self.states = self._new_states(B)
        self.learners = np.zeros(B, dtype=np.int64)
        self.seat_codes = np.full((B, max(self.seats) + 1), LEARNER, dtype=np.int64)
        self.labels: list[list[str]] = [[] for _ in range(B)]  # each game's opponents, for infos
        self._rngs = np.zeros(B, dtype=np.int64)  # each game's generator of its compiled opponents
        self._waiting = np.full(B, -1, dtype=np.int64)
        size = len(game.policy_input(first, self.seats[0]))
        self._obs = np.zeros((B, size), dtype=np.float32)
        self._masks = np.zeros((B, self.n_actions), dtype=np.int8)
        self._rewards = np.zeros(B, dtype=np.float32)
        self._terminated = np.zeros(B, dtype=np.bool_)
        self._truncated = np.zeros(B, dtype=np.bool_)
        self._episode_steps = np.zeros(B, dtype=np.int64)
        self._all = np.arange(B, dtype=np.int64)
        # Agents outside the compiled loop: code - EXTERNAL -> agent; policies by object, other
        # agents one per (game, spec) so no two games share an agent's state.
        self._registry: dict[int, Any] = {}
        self._codes: dict[Any, int] = {}
        self._next_code = EXTERNAL
        self.forwards = 0  # batched policy forwards (one per network and round)
        self.external_moves = 0  # opponent moves chosen outside the compiled loop
        self._rng = np.random.default_rng(seed)
        self._seed = seed
        self._start_time = time.perf_counter()
        self.render_mode = None
        observation_space = spaces.Box(self.observation_low, np.inf, (size,), dtype=np.float32)
        super().__init__(B, observation_space, spaces.Discrete(self.n_actions))

    # -- the game's steps (over the Game API; the board game's are compiled) ------------------
    def _new_states(self, num_envs: int):
        return [None] * num_envs

    def _running(self, b: int) -> bool:
        return self.game.is_running(self.states[b], self.max_turns)

    def _advance(self) -> int:
        """Lone legal moves are played in every game until the learner must decide, the game
        is over, or an opponent must choose: waiting[b] := its seat code, else -1. Returns how
        many games wait."""
        for b in range(self.num_envs):
            self._waiting[b] = -1
            while self._running(b) and (seat := self.game.to_move(self.states[b])) != self.learners[b]:
                legal = self.game.legal_actions(self.states[b])
                if len(legal) > 1:
                    self._waiting[b] = self.seat_codes[b, seat]
                    break
                self.states[b] = self.game.apply(self.states[b], int(legal[0]))
        return int((self._waiting >= 0).sum())

    def _apply(self, games, actions) -> None:
        for b, action in zip(games, actions):
            self.states[b] = self.game.apply(self.states[b], int(action))

    def _inputs(self, games, seats, inputs, masks) -> None:
        """inputs[b] := the policy input of seat seats[k] in game b = games[k]; masks[b] := its
        legal actions (none once the game is over)."""
        for b, seat in zip(games, seats):
            inputs[b] = self.game.policy_input(self.states[b], int(seat))
            masks[b] = 0
            masks[b, self.game.legal_actions(self.states[b]) if self._running(b) else []] = 1

    def _learner_views(self, games) -> None:
        self._inputs(games, self.learners[games], self._obs, self._masks)

    def _outcomes(self) -> None:
        """Rewards and end flags of every game."""
        for b in range(self.num_envs):
            winner = self.game.winner(self.states[b])
            self._terminated[b] = winner is not None
            self._truncated[b] = winner is None and not self._running(b)
            won = self.learners[b] in self.game.winning_seats(self.states[b])
            self._rewards[b] = 0.0 if winner is None else 1.0 if won else -1.0

    # -- episodes -----------------------------------------------------------------------------
    def _code(self, b: int, opponent) -> int:
        """The seat code of one opponent drawn by the pool (an agent name, or an agent object
        shared by every game: a PolicyAgent or one added with ``OpponentPool.add_agent``)."""
        key: tuple[str | int, str] | int
        if isinstance(opponent, str):
            name = ALIASES.get(opponent, opponent)
            if name in self.compiled_kinds:
                return self.compiled_kinds.index(name)
            if name.endswith(".safetensors") and not is_import_spec(name):
                key = ("policy", opponent)  # a policy file: one network for all games
            else:
                key = (b, opponent)
        else:
            key = id(opponent)
        code = self._codes.get(key)
        if code is None:
            agent = opponent if not isinstance(opponent, str) else as_agent(opponent, game=self.game)
            agent.check_game(self.game.agent_rules, self.num_players)
            code = self._next_code
            self._next_code += 1
            self._codes[key] = code
            self._registry[code] = agent
        return code

    def _new_episode(self, b: int) -> None:
        """Deal game b a new game: engine seed, learner seat and opponents from the generator."""
        rng = self._rng
        self.states[b] = self.game.new_state(self.num_players, seed=int(rng.integers(2**32)))
        seat = self.seats[int(rng.integers(len(self.seats)))]
        others = seats_after(self.seats, seat)
        opponents = self.pool.sample(rng, len(others))
        self.learners[b] = seat
        self.seat_codes[b] = LEARNER
        for other, opponent in zip(others, opponents):
            code = self._code(b, opponent)
            self.seat_codes[b, other] = code
            if code >= EXTERNAL and not isinstance(self._registry[code], NETWORKS):
                self._registry[code].reset(int(rng.integers(2**31)))
        self.labels[b] = [o if isinstance(o, str) else o.name for o in opponents]
        self._rngs[b] = int(rng.integers(2**32))
        self._episode_steps[b] = 0

    def _forget_unused(self) -> None:
        """Drop snapshots no game plays any more (they left the pool's window)."""
        used = set(np.unique(self.seat_codes).tolist())
        for key, code in list(self._codes.items()):
            if code not in used and isinstance(key, int):
                del self._codes[key], self._registry[code]

    def _play_to_learner(self) -> None:
        """Opponents move (compiled, batched forwards, or per move) in every game until each
        learner must decide or its game is over."""
        while self._advance():
            self._external_moves()

    def _external_moves(self) -> None:
        """One move in each waiting game, grouped by agent: one forward per network."""
        waiting = np.flatnonzero(self._waiting >= 0)
        codes = self._waiting[waiting]
        for code in np.unique(codes):
            games = waiting[codes == code]
            agent = self._registry[int(code)]
            if isinstance(agent, NETWORKS):
                actions = self._policy_moves(agent, games)
            else:
                actions = self._agent_moves(agent, games)
            self._apply(games, actions)
            self.external_moves += len(games)

    @torch.no_grad()
    def _policy_moves(self, agent, games: np.ndarray) -> np.ndarray:
        # The learners' buffers hold the movers' inputs meanwhile: each step and reset rewrites
        # them once the opponents have moved (the finished games' after their copies in infos).
        movers = np.array([self.game.to_move(self.states[b]) for b in games], dtype=np.int64)
        self._inputs(games, movers, self._obs, self._masks)
        inputs, masks = self._obs[games], self._masks[games]
        logits = masked_logits(actor_logits(agent.actor, torch.from_numpy(inputs)), masks).numpy()
        self.forwards += 1
        if agent.sample:  # Gumbel-max: a draw from softmax(logits) per row, from the env's generator
            logits = logits + self._rng.gumbel(size=logits.shape)
        return logits.argmax(axis=1).astype(np.int64)

    def _turn(self, b: int) -> Turn | GameTurn:
        return agent_turn(self.game, self.states[b], self._rng, self.game.legal_actions(self.states[b]))

    def _agent_moves(self, agent, games: np.ndarray) -> np.ndarray:
        """`agent`'s move in each of `games`: one ``act_turns`` call for all of them from an agent
        that acts in batches (``acts_in_batches``), else one ``act`` call per game."""
        turns = [self._turn(b) for b in games]
        if getattr(agent, "acts_in_batches", False):
            actions = agent.act_turns(turns)
        else:
            actions = [agent.act(turn) for turn in turns]
        if len(actions) != len(turns):
            raise ValueError(f"opponent {agent.name!r} answered {len(actions)} of {len(turns)} turns")
        checked = [self._check_move(agent, b, turn, action) for b, turn, action in zip(games, turns, actions)]
        return np.array(checked, dtype=np.int64)

    def _check_move(self, agent, b: int, turn, action) -> int:
        who = f"opponent {agent.name!r} (game {b}, seat {self.game.to_move(self.states[b])})"
        return checked_action(action, turn.legal, who)

    def _start_games(self, games) -> None:
        """New episodes in `games`, played up to the learner's first decision (an episode that
        ends before it is dealt again)."""
        games = list(games)
        while games:
            for b in games:
                self._new_episode(b)
            self._play_to_learner()
            games = [b for b in games if not self._running(b)]

    # -- VecEnv API ---------------------------------------------------------------------------
    def reset(self) -> np.ndarray:
        if self._seed is not None:
            self._rng = np.random.default_rng(self._seed)
            self._seed = None
        self._start_games(range(self.num_envs))
        self._learner_views(self._all)
        self._started = True
        return self._obs.copy()

    def step_wait(self):
        if not getattr(self, "_started", False):
            raise RuntimeError("call reset() before step()")
        actions = V.check_actions(self.take_actions(), self.num_envs, self._masks, self._describe)
        self._apply(self._all, actions)
        self._episode_steps += 1
        self._play_to_learner()
        self._outcomes()
        rewards = self._rewards.copy()
        dones = self._terminated | self._truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if dones.any():
            finished = np.flatnonzero(dones)
            self._learner_views(finished)
            now = time.perf_counter() - self._start_time
            for b in finished:
                infos[b] = {
                    "terminal_observation": self._obs[b].copy(),
                    "TimeLimit.truncated": bool(self._truncated[b]),
                    "episode": {"r": float(rewards[b]), "l": int(self._episode_steps[b]), "t": round(now, 6)},
                    "learner_won": bool(rewards[b] > 0),
                    "learner_seat": int(self.learners[b]),
                    "opponents": self.labels[b],
                }
            self._start_games(finished)
            if len(self._registry) > 2 * (self.pool.snapshot_window + len(self.pool.mix)) + 8:
                self._forget_unused()
        self._learner_views(self._all)
        return self._obs.copy(), rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """bool[B, n_actions]: each game's legal learner actions."""
        return self._masks.astype(bool)

    def _describe(self, b: int) -> str:
        return f"learner seat {int(self.learners[b])}"


class BatchedSelfPlayEnv(SelfPlayEnv):
    """B self-play learner games of the board game for MaskablePPO; see the module docstring.
    `cfg` is a trainer config (training.config: ``envs``, ``game``), `pool` the run's opponent
    pool. The random, greedy and heuristic opponents, lone legal moves, observations and
    outcomes are compiled loops over all the games."""

    compiled_kinds = OPPONENT_KINDS
    observation_low = -1.0

    def __init__(self, cfg: dict, pool: OpponentPool, seed: int | None = None):
        g = cfg["game"]
        super().__init__(policy_game(g["rules"]), g["num_players"], g["max_turns"], cfg["envs"], pool, seed)
        self._rules = game.rules_array(self.game.rules)
        self._weights = DEFAULT_WEIGHTS.array()

    def _new_states(self, num_envs: int):
        return np.zeros((num_envs, E.STATE_SIZE), dtype=np.int64)

    def _advance(self) -> int:
        args = (self.seat_codes, self._weights, self.learners, self._rngs, self.max_turns, self._waiting)
        return advance(self.states, self._rules, *args)

    def _apply(self, games, actions) -> None:
        apply_actions(self.states, self._rules, games, actions)

    def _inputs(self, games, seats, inputs, masks) -> None:
        policy_inputs(self.states, self._rules, self.max_turns, games, seats, inputs, masks)

    def _outcomes(self) -> None:
        outcomes(
            self.states, self._rules, self.learners, self.max_turns, self._rewards, self._terminated, self._truncated
        )

    def _describe(self, b: int) -> str:
        return f"learner seat {int(self.learners[b])}, card {game.card(self.states[b])}"
