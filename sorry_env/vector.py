"""Batched Sorry!: B games stepped together by one compiled call per step.

``SorryVectorEnv`` is a Gymnasium ``VectorEnv`` in **self-play** mode: each step the caller
gives one action per game, for whichever seat is to move in that game. Games that end are
reset in the same call (see *Autoreset* below). The compiled-opponent mode (the caller acts
for one learner seat, random / greedy / heuristic opponents move inside the compiled loop)
lives beside it in :mod:`sorry_env.vector_opponents` (its opponents are the board game's
compiled scripted choices, :mod:`sorry_env.board.scripted_choices`). Both modes share the per-game
primitives below.

Gymnasium's vector wrappers (``RecordEpisodeStatistics``, ``NormalizeReward``) want one reward
per game and, as ``make_vec``, NEXT_STEP autoreset: use :class:`SorrySeatVectorEnv` (self-play,
one seat's reward) or ``sorry_env.vector_opponents.VectorOpponentEnv`` (one learner against
compiled opponents), not ``SorryVectorEnv``, whose rewards are per seat.

Arrays (``B = num_envs``, ``N = n_actions``)
------------------------------------------------
``observation``  float32[B, 1184]  the single env's observation (:mod:`sorry_env.board.observation`)
                                   of the seat to move in each game
``action_mask``  int8[B, N]        1 on the legal actions of that seat
rewards          float32[B, 4]     per seat (index = seat): +1 to the winning side, -1 to the
                                   other active seats, 0 otherwise and on truncation
terminations     bool[B]           the game was won this step
truncations      bool[B]           ``max_turns`` cards were played without a winner
``infos["to_move"]``  int64[B]     the seat whose turn it is now in each game (the one the
                                   observation and mask belong to)

Seeds
-----
Game ``i`` of a batch reset with ``seed`` has the *game seed* ``seed + i`` (or ``seed[i]``
with a list of B seeds). Its episode ``k`` (0 for the first game, +1 at each autoreset)
starts exactly as ``raw_env.reset(seed=game_seed + k * 2**32)`` would: the engine seed is
``numpy.random.SeedSequence(game_seed + k * 2**32).generate_state(1)[0]``, computed in
compiled code (:func:`episode_seed`). Nothing depends on B or on a game's neighbours: a batch
of 8 seeded 0 plays the same 8 trajectories (for the same actions) as two batches of 4
seeded 0 and 4, or eight single envs seeded 0..7. Game seeds must be below ``2**32``.

Autoreset (Gymnasium ``AutoresetMode.SAME_STEP``)
--------------------------------------------------
When a game ends in ``step``, the same call starts its next episode: the returned
observation, mask and ``to_move`` of that game are those of the new game, its reward /
termination / truncation are those of the finished one, and
``infos["final_obs"][i]`` holds the finished game's last observation (seen by the seat that
made the last move; ``infos["_final_obs"][i]`` is True). No step is spent on a reset.

Errors
------
A wrong action array (shape, dtype, out of range) or an illegal action raises ``ValueError``
naming the game index and its legal actions, before any game is stepped.
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from numba import njit, prange

from .board import engine as E
from .board import game
from .board.geometry import N_SEATS
from .board.observation import OBS_SIZE, observe
from .board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, get_rules
from .game_env import check_max_turns
from .games import check_first_seat
from .gym_space import observation_space

SEED_LIMIT = 2**32  # game seeds must be below this (episode k adds k * 2**32)


# ---- seeds (numpy's SeedSequence for one integer entropy, compiled) ------------------------
@njit(cache=True)
def _hashmix(value, hash_const):
    value = (value ^ hash_const[0]) & 0xFFFFFFFF
    hash_const[0] = (hash_const[0] * 0x931E8875) & 0xFFFFFFFF
    value = (value * hash_const[0]) & 0xFFFFFFFF
    return value ^ (value >> 16)


@njit(cache=True)
def _mix(x, y):
    result = (0xCA01F9DD * x - 0x4973F715 * y) & 0xFFFFFFFF
    return result ^ (result >> 16)


@njit(cache=True)
def episode_seed(game_seed, episode):
    """The engine seed of episode `episode` of a game seeded `game_seed` (< 2**32): the first
    word of ``SeedSequence(game_seed + episode * 2**32).generate_state(1)``, i.e. the seed
    ``raw_env.reset(seed=game_seed + episode * 2**32)`` starts from."""
    words = np.zeros(4, dtype=np.int64)
    words[0] = game_seed & 0xFFFFFFFF
    words[1] = episode & 0xFFFFFFFF  # episode 0: one entropy word (0), the same as none
    hash_const = np.empty(1, dtype=np.int64)
    hash_const[0] = 0x43B0D7E5
    pool = np.empty(4, dtype=np.int64)
    for i in range(4):
        pool[i] = _hashmix(words[i], hash_const)
    for src in range(4):
        for dst in range(4):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], hash_const))
    value = pool[0] ^ 0x8B51F9DD
    value = (value * ((0x8B51F9DD * 0x58F38DED) & 0xFFFFFFFF)) & 0xFFFFFFFF
    return value ^ (value >> 16)


# ---- per-game primitives (shared with vector_opponents) -----------------------------
@njit(cache=True)
def is_over(state, max_turns):
    return not E.is_running(state, max_turns)


@njit(cache=True)
def write_view(state, rules, viewer, max_turns, obs, mask):
    """`obs` := viewer's observation; `mask` := legal actions of the seat to move (all zero
    once the game is over)."""
    observe(state, rules, viewer, obs)
    if is_over(state, max_turns):
        mask[:] = 0
    else:
        E.legal_mask(state, rules, mask)


@njit(cache=True)
def first_illegal(masks, actions):
    """Index of the first game whose action is out of range or not legal, or -1."""
    n = masks.shape[1]
    for b in range(actions.shape[0]):
        a = actions[b]
        if a < 0 or a >= n or masks[b, a] == 0:
            return b
    return -1


@njit(cache=True)
def end_move(b, state, rules, max_turns, viewer, terminated, truncated, ended, final_obs):
    """After a move in game b (its `state`): its terminated / truncated / ended flags and,
    when it ended, `viewer`'s observation of its last position in final_obs[b]. Every step
    kernel (self-play, one seat's reward, against compiled opponents) ends a move here.
    Returns the winner (-1 while there is none)."""
    winner = state[E.WINNER]
    terminated[b] = winner >= 0
    truncated[b] = winner < 0 and state[E.TURN] >= max_turns
    ended[b] = terminated[b] or truncated[b]
    if ended[b]:
        observe(state, rules, viewer, final_obs[b, :OBS_SIZE])
    return winner


@njit(cache=True)
def seat_reward(rules, seat, winner):
    """+1 when `seat`'s side is the winner's, -1 when another side won, 0 without a winner."""
    if winner < 0:
        return 0.0
    return 1.0 if E.same_side(rules, seat, winner) else -1.0


@njit(cache=True)
def next_episode(b, states, rules, active, game_seeds, episodes):
    """Start game b's next episode in its slot (autoreset; from episode -1: the reset);
    returns its engine seed."""
    episodes[b] += 1
    seed = episode_seed(game_seeds[b], episodes[b])
    E.init_state(states[b], rules, active, seed)
    return seed


# ---- stepping --------------------------------------------------------------------------------
# Every step kernel takes the games' settings (BatchedGames._args), one action per game and the
# output buffers (BatchedGames._outputs). The action NEXT_EPISODE starts a game's next episode
# instead of moving: reset() is one step of it from episode -1, and a NEXT_STEP autoreset
# is one such action in the slot.
NEXT_EPISODE = -1


@njit(cache=True)
def _selfplay_one(
    b, states, rules, active, game_seeds, episodes, max_turns, same_step,
    actions, obs, masks, rewards, terminated, truncated, ended, final_obs, to_move,
):  # fmt: skip
    state = states[b]
    mover = state[E.TO_MOVE]
    if actions[b] == NEXT_EPISODE:
        next_episode(b, states, rules, active, game_seeds, episodes)
    else:
        E.step(state, rules, actions[b])
    winner = end_move(b, state, rules, max_turns, mover, terminated, truncated, ended, final_obs)
    for seat in range(N_SEATS):
        rewards[b, seat] = seat_reward(rules, seat, winner) if active[seat] else 0.0
    if ended[b] and same_step:
        next_episode(b, states, rules, active, game_seeds, episodes)
    # NEXT_STEP: an ended game shows its last position, seen by the seat that made the last
    # move (mask all zero); the next step's NEXT_EPISODE restarts it.
    to_move[b] = mover if ended[b] and not same_step else state[E.TO_MOVE]
    write_view(state, rules, to_move[b], max_turns, obs[b], masks[b])


# The drivers pass their arguments on as one tuple (`*args`: those of _selfplay_one after
# `states`), so the two share one signature and the parallel one only swaps range for prange.
@njit(cache=True)
def selfplay_step_serial(states, *args):
    """Step every game b with actions[b] (legal: checked by the caller), one thread.
    Arguments: those of _selfplay_one after `b`."""
    for b in range(states.shape[0]):
        _selfplay_one(b, states, *args)


@njit(cache=True, parallel=True)
def selfplay_step_parallel(states, *args):
    """selfplay_step_serial with the games spread over numba's threads (games are
    independent, so the result is the same)."""
    for b in prange(states.shape[0]):
        _selfplay_one(b, states, *args)


# ---- Python side -----------------------------------------------------------------------------
def check_num_envs(num_envs) -> int:
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
        raise ValueError(f"num_envs must be a positive integer, got {num_envs!r}")
    return int(num_envs)


def game_seeds_for(seed, num_envs: int) -> np.ndarray:
    """int64[num_envs] game seeds: seed + i for an integer seed, the list itself for a list
    of num_envs seeds, fresh random ones for None. Each must be in 0 .. 2**32 - 1."""
    if seed is None:
        base = int(np.random.SeedSequence().generate_state(1)[0]) % (SEED_LIMIT - num_envs)
        return np.arange(base, base + num_envs, dtype=np.int64)
    if isinstance(seed, (list, tuple, np.ndarray)):
        seeds = list(seed)
        if len(seeds) != num_envs:
            raise ValueError(f"a list of seeds needs one per game: {num_envs}, got {len(seeds)}")
        for s in seeds:
            game.check_seed(s)
    else:
        game.check_seed(seed)
        seeds = [int(seed) + i for i in range(num_envs)]
    if max(int(s) for s in seeds) >= SEED_LIMIT:
        raise ValueError(f"game seeds must be below 2**32 (game i is seeded seed + i); got up to {max(seeds)}")
    return np.array(seeds, dtype=np.int64)


def check_actions(actions, num_envs: int, masks: np.ndarray, describe, ignored: np.ndarray | None = None) -> np.ndarray:
    """`actions` as int64[num_envs] after checking shape, dtype and legality; a ValueError
    naming the first bad game (and its legal actions) otherwise. `describe(b)` names game b.
    `ignored` (bool[num_envs]): games whose actions are not played, not checked: they become
    NEXT_EPISODE (the games that ended last step in NEXT_STEP autoreset)."""
    arr = np.asarray(actions)
    if arr.shape != (num_envs,):
        raise ValueError(f"actions must have shape ({num_envs},), one per game; got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"actions must be integers, got dtype {arr.dtype}")
    if ignored is None:
        arr = arr.astype(np.int64, copy=False)
        bad = first_illegal(masks, arr)
    else:
        arr = arr.astype(np.int64)
        arr[ignored] = NEXT_EPISODE
        running = np.flatnonzero(~ignored)
        bad = first_illegal(masks[running], arr[running])
        bad = int(running[bad]) if bad >= 0 else -1
    if bad >= 0:
        legal = np.flatnonzero(masks[bad]).tolist()
        if not legal:
            raise ValueError(f"game {bad}: no action is legal ({describe(bad)})")
        raise ValueError(f"game {bad}: action {int(arr[bad])} is illegal ({describe(bad)}); legal: {legal}")
    return arr


class BatchedGames:
    """What the batched envs share: B engine states, their seeds and episode counters, the
    output buffers, and reset / step through the subclass's compiled step (``_kernels``:
    serial and parallel). The autoreset mode in ``metadata`` decides what ``step`` does with
    the games that ended: SAME_STEP restarts them in the kernel and reports their last
    observations (``infos["final_obs"]``), NEXT_STEP restarts them at the next step,
    ignoring the actions given for them."""

    metadata: ClassVar[dict]
    # The compiled step: (serial, parallel), indexed by the parallel flag (the compiled
    # opponents' env has its own).
    _kernels: ClassVar[tuple] = (selfplay_step_serial, selfplay_step_parallel)

    # The VectorEnv spaces, set by _set_spaces.
    single_observation_space: gymnasium.Space
    single_action_space: gymnasium.Space
    observation_space: gymnasium.Space
    action_space: gymnasium.Space

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        seats=None,
        rules=DEFAULT_PRESET,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        parallel: bool = False,
        copy: bool = True,
    ):
        self.num_envs = check_num_envs(num_envs)
        self.max_turns = check_max_turns(max_turns)
        self.rules = get_rules(rules)
        self.seats = game.seats_for(num_players if seats is None else None, seats, self.rules)
        self.num_players = len(self.seats)
        self.parallel = bool(parallel)
        self.copy = bool(copy)
        self.n_actions = game.num_actions(self.rules)
        self._rules = game.rules_array(self.rules)
        self._active = np.zeros(4, dtype=np.int64)
        self._active[list(self.seats)] = 1
        B = self.num_envs
        self.states = np.zeros((B, E.STATE_SIZE), dtype=np.int64)
        self.game_seeds = np.zeros(B, dtype=np.int64)
        self.episodes = np.zeros(B, dtype=np.int64)
        self._obs = np.zeros((B, OBS_SIZE), dtype=np.float32)
        self._masks = np.zeros((B, self.n_actions), dtype=np.int8)
        self._rewards: np.ndarray = np.zeros((B, N_SEATS), dtype=np.float32)  # by seat (float32[B]: the learner's)
        self._to_move = np.zeros(B, dtype=np.int64)
        self._terminated = np.zeros(B, dtype=np.bool_)
        self._truncated = np.zeros(B, dtype=np.bool_)
        self._ended = np.zeros(B, dtype=np.bool_)
        self._final_obs = np.zeros((B, OBS_SIZE), dtype=np.float32)
        self._started = False
        self._set_spaces(observation_space(self.rules, self.num_players))

    def _set_spaces(self, single: spaces.Dict) -> None:
        """The spaces of one game (`single`: the observation dict's) and of all B."""
        self.single_observation_space = single
        self.single_action_space = spaces.Discrete(self.n_actions)
        self.observation_space = batch_space(single, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    @property
    def _same_step(self) -> bool:
        return self.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP

    def _args(self):
        """The compiled step's leading arguments: the games and their settings."""
        return (self.states, self._rules, self._active, self.game_seeds, self.episodes, self.max_turns, self._same_step)

    def _outputs(self):
        """The compiled step's buffers, after the actions."""
        return (self._obs, self._masks, self._rewards, self._terminated, self._truncated, self._ended,
                self._final_obs, self._to_move)  # fmt: skip

    def _infos(self) -> dict:
        return {"to_move": self._to_move.copy()}

    def _run(self, actions: np.ndarray) -> None:
        self._kernels[self.parallel](*self._args(), actions, *self._outputs())

    def reset(self, *, seed=None, options=None):
        """Start every game's episode 0 from its game seed (see the module docstring).
        Returns (observation dict, infos)."""
        self.game_seeds[:] = game_seeds_for(seed, self.num_envs)
        self.episodes[:] = -1
        self._run(np.full(self.num_envs, NEXT_EPISODE, dtype=np.int64))
        self._started = True
        return self._observation(), self._infos()

    def step(self, actions):
        """One move in every game (see the class docstring for the games that ended); returns
        (observation dict, rewards, terminations, truncations, infos)."""
        if not self._started:
            raise RuntimeError("call reset() before step()")
        ignored = None if self._same_step else self._ended
        self._run(check_actions(actions, self.num_envs, self._masks, self.describe, ignored))
        infos = self._infos()
        if self._same_step:  # the finished games' last observations
            ended = self._ended.copy()
            infos["final_obs"] = np.empty(self.num_envs, dtype=object)
            for b in np.flatnonzero(ended):
                infos["final_obs"][b] = self._final_obs[b].copy()
            infos["_final_obs"] = ended
        return (self._observation(), self._reward(), self._terminated.copy(), self._truncated.copy(), infos)

    def _reward(self) -> np.ndarray:
        return self._rewards.copy()

    def _out(self, array):
        return array.copy() if self.copy else array

    def _observation(self):
        return {"observation": self._out(self._obs), "action_mask": self._out(self._masks)}

    def close(self, **kwargs):
        pass

    def describe(self, b: int) -> str:
        """Game b's position in words, for error messages."""
        state = self.states[b]
        if state[E.WINNER] >= 0:
            return "game over"
        card = game.card(state)
        return f"seat {int(state[E.TO_MOVE])} to move, card {card}, episode {int(self.episodes[b])}"

    def action_masks(self) -> np.ndarray:
        """bool[B, N]: the legal actions of the seat to move in each game."""
        return self._masks.astype(bool)


class SorryVectorEnv(BatchedGames, gymnasium.vector.VectorEnv):
    """B games of Sorry! in self-play (the caller acts for the seat to move in each game);
    see the module docstring for the arrays, seeds and autoreset. ``step`` returns
    (observation dict, rewards float32[B, 4] by seat, terminations, truncations, infos with
    ``to_move``, ``final_obs``, ``_final_obs``); ``reset``, infos with ``to_move``.

    Arguments: ``SorryVectorEnv(num_envs, num_players=2, seats=None, rules=DEFAULT_PRESET,
    max_turns=DEFAULT_MAX_TURNS, parallel=False, copy=True)``.
    ``parallel=True`` spreads the games over numba's threads (``NUMBA_NUM_THREADS``; the
    results are the same). It is off by default: on a machine whose cores are busy with
    other work the threads wait for each other and a step gets several times slower
    (docs/vector.md has the figures); on idle cores it is worth measuring;
    ``copy=False`` returns the env's own buffers (overwritten by the next step) instead of
    copies, as Gymnasium's ``copy`` flag does."""

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # type: ignore[misc]


class SorrySeatVectorEnv(BatchedGames, gymnasium.vector.VectorEnv):
    """Self-play games as Gymnasium's vector wrappers expect them (``RecordEpisodeStatistics``,
    ``NormalizeReward``, ...): the reward is a float32[B] of one seat (``reward_seat``: +1
    when its side wins, -1 when another wins, 0 otherwise and on truncation) and autoreset is
    ``AutoresetMode.NEXT_STEP``, the mode ``gymnasium.make_vec`` uses.

    As in :class:`SorryVectorEnv` the caller acts for the seat to move in every game
    (``infos["to_move"]``), seeds work the same way and the observation is the mover's. When
    a game ends, that step returns its last position (seen by the seat that made the last
    move, mask all zero) with the reward and flags; the next ``step`` starts the next episode
    in that slot, ignores the action given for it and returns reward 0 (Gymnasium's
    NEXT_STEP contract). ``step`` returns (observation dict, rewards float32[B] of
    reward_seat, terminations, truncations, infos with ``to_move``). To train one seat
    against fixed opponents use :class:`sorry_env.vector_opponents.VectorOpponentEnv`
    instead: its rewards are already the learner's."""

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}  # type: ignore[misc]

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        seats=None,
        rules=DEFAULT_PRESET,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        reward_seat: int | None = None,
        copy: bool = True,
    ):
        BatchedGames.__init__(self, num_envs, num_players, seats, rules, max_turns, False, copy)
        self.reward_seat = check_first_seat(
            self.seats[0] if reward_seat is None else reward_seat, self.seats, "reward_seat"
        )

    def _reward(self) -> np.ndarray:
        return self._rewards[:, self.reward_seat].copy()  # the self-play step rewards every seat
