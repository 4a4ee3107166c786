"""Batched Sorry! against compiled opponents: the caller acts for one learner seat per game;
random, greedy and heuristic opponents move inside the compiled loop (no Python per
opponent move).

Layering: the batched engine core (seeds, autoreset, observation and mask buffers, action
checks) is :mod:`sorry_env.vector`; the opponents' move choices are the board game's compiled
scripted choices (:func:`sorry_env.board.scripted_choices.greedy_choice`,
:func:`sorry_env.board.scripted_choices.heuristic_choice`, the ones the ``greedy`` and ``heuristic``
agents call); this module's compiled loop calls both. Opponents here are named by data
(:data:`OPPONENT_KINDS`: names of compiled choosers), not agent specs.

``VectorOpponentEnv(num_envs, num_players=2, opponents="heuristic", ...)`` is a Gymnasium
``VectorEnv`` with the self-play env's seeds and SAME_STEP autoreset
(:mod:`sorry_env.vector`), except:

- Game ``i``'s episode ``k`` (game seed ``s``) seats the learner at
  ``seats[(s + k) % num_players]``, so the learner plays every seat equally often
  (``learner_seat=SEAT``: always that seat); the other
  seats, in turn order after the learner, are played by ``opponents`` (one kind for all,
  or a list of one kind or ``num_players - 1`` kinds out of :data:`OPPONENT_KINDS`).
- Each step plays the learner's action, then the opponents until the learner holds a card
  again or the game ends. Observations and masks are the learner's. ``rewards`` is
  float32[B]: +1 when the learner's side won, -1 when another side won, 0 otherwise.
- ``policy_input=True`` makes the observation the trained policies' input vector
  (:mod:`sorry_env.board.policy_input`: the observation followed by the learner's own view of the
  state array), as the MaskablePPO trainer uses.
- ``infos["opponent_moves"]``: opponent moves played in this step, per game (their cost per
  learner step is what ``benchmarks/bench_vector.py`` reports).

An opponent sees a public view of the game, as agents do everywhere (with hands, the other
hands and the draw pile are re-dealt from its own generator before it chooses); a lone
legal move is played without asking. The opponents' generator (random's choices, the
re-deals) is seeded from the episode's seed, so the same seed gives the same games. Greedy
and heuristic pick the first best move among the sorted legal actions, as
the agents ``greedy`` and ``heuristic`` do, so their batched play
equals theirs move for move.
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium
import numpy as np
from gymnasium.vector import AutoresetMode
from numba import njit, prange

from . import vector as V
from .agent import one_per_seat
from .board import engine as E
from .board.evaluation import DEFAULT_WEIGHTS
from .board.geometry import N_SEATS
from .board.observation import OBS_SIZE
from .board.policy_input import own_view
from .board.rules import DEFAULT_MAX_TURNS, DEFAULT_PRESET, R_HAND_SIZE
from .board.scripted_choices import greedy_choice, heuristic_choice
from .games import check_first_seat
from .generator import advance, mix
from .gym_space import flat_space, observation_space

OPPONENT_KINDS = ("random", "greedy", "heuristic")
RANDOM, GREEDY, HEURISTIC = range(3)


@njit(cache=True)
def _rand32(rngs, b):
    """32 random bits from game b's opponent generator (the engine's LCG and mixer)."""
    rngs[b] = advance(rngs[b])
    return mix(rngs[b])


@njit(cache=True)
def _rand(rngs, b, n):
    """Uniform integer in [0, n) from game b's opponent generator."""
    return (_rand32(rngs, b) * n) >> 32


@njit(cache=True)
def scripted_choice(state, rules, kind, weights, rngs, b, legal, n, view):
    """The move compiled opponent `kind` (RANDOM, GREEDY or HEURISTIC) chooses for the seat
    to move among the sorted legal[:n], drawing from game b's generator ``rngs[b]``; `view`
    is scratch space of the state's size. Also the self-play trainer's scripted opponents
    (training.batched_env)."""
    if kind == RANDOM:
        return legal[_rand(rngs, b, n)]
    view[:] = state
    if rules[R_HAND_SIZE]:  # hide the other hands and the draw order, as Turn.from_state does
        E.seed_generator(view, _rand32(rngs, b))
        E.redeal_hidden(view, rules, E.to_move(state))
    if kind == GREEDY:
        return greedy_choice(view, rules, legal, n)
    return heuristic_choice(view, rules, weights, legal, n)


@njit(cache=True, inline="always")  # inlined: called once per game in every batched step
def play_opponents(b, state, rules, codes, weights, learner, rngs, max_turns, buf, view):
    """The compiled opponents (seat codes codes[seat]: RANDOM, GREEDY or HEURISTIC) and lone
    legal moves play game b until the learner holds a card, the game is over, or the seat to
    move has another code (an opponent outside the compiled loop: the self-play trainer's,
    training.batched_env); returns their number of moves. `buf` (int64[n_actions]) and `view`
    (the state's size) are scratch space."""
    moves = 0
    while not V.is_over(state, max_turns) and E.to_move(state) != learner:
        seat = E.to_move(state)
        n = E.legal_actions(state, rules, buf)
        if n == 1:
            action = buf[0]
        elif codes[seat] > HEURISTIC:
            break
        else:
            action = scripted_choice(state, rules, codes[seat], weights, rngs, b, np.sort(buf[:n]), n, view)
        E.step(state, rules, action)
        moves += 1
    return moves


@njit(cache=True)
def _start_next(
    b, states, rules, active, seats, kinds, codes, weights, game_seeds, episodes, learners, rngs, max_turns, buf, view
):
    """Start game b's next episode and play the opponents up to the learner's first move
    (an episode that ends before it is skipped: the next one starts); returns their moves."""
    moves = 0
    while True:
        seed = V.next_episode(b, states, rules, active, game_seeds, episodes)
        learners[b] = seats[(game_seeds[b] + episodes[b]) % seats.shape[0]]
        for k in range(kinds.shape[0]):  # kinds[k]: the (k + 1)-th seat after the learner's
            codes[b, E.other_seat(states[b], learners[b], k + 1)] = kinds[k]
        rngs[b] = (seed * 0x9E3779B1 + 0x7F4A7C15) & 0xFFFFFFFF
        moves += play_opponents(b, states[b], rules, codes[b], weights, learners[b], rngs, max_turns, buf, view)
        if not V.is_over(states[b], max_turns):
            return moves


@njit(cache=True, inline="always")  # inlined: called once per game in every batched step
def write_own_view(state, rules, learner, with_state, out):
    """With `with_state`, the learner's own view of the state array after the observation in
    `out` (the trained policies' input vector, :mod:`sorry_env.board.policy_input`; also the
    self-play trainer's, training.batched_env)."""
    if with_state:
        public = np.empty(E.STATE_SIZE, dtype=np.int64)
        own_view(state, rules, learner, public)
        out[OBS_SIZE:] = public


@njit(cache=True)
def _learner_one(
    b, states, rules, active, seats, kinds, codes, weights, game_seeds, episodes, learners, rngs, max_turns, with_state,
    actions, obs, masks, rewards, terminated, truncated, ended, final_obs, opponent_moves,
):  # fmt: skip
    state = states[b]
    buf = np.empty(E.num_actions(rules), dtype=np.int64)
    view = np.empty_like(state)
    starts = (b, states, rules, active, seats, kinds, codes, weights, game_seeds, episodes, learners, rngs, max_turns)
    if actions[b] == V.NEXT_EPISODE:
        moves = _start_next(*starts, buf, view)
    else:
        E.step(state, rules, actions[b])
        moves = play_opponents(b, state, rules, codes[b], weights, learners[b], rngs, max_turns, buf, view)
    learner = learners[b]
    winner = V.end_move(b, state, rules, max_turns, learner, terminated, truncated, ended, final_obs)
    rewards[b] = V.seat_reward(rules, learner, winner)
    if ended[b]:  # SAME_STEP autoreset
        write_own_view(state, rules, learner, with_state, final_obs[b])
        moves += _start_next(*starts, buf, view)
    opponent_moves[b] = moves
    V.write_view(state, rules, learners[b], max_turns, obs[b, :OBS_SIZE], masks[b])
    write_own_view(state, rules, learners[b], with_state, obs[b])


# As in sorry_env.vector, the drivers pass their arguments on as one tuple (those of
# _learner_one after `states`): one signature, and the parallel one only swaps in prange.
@njit(cache=True)
def learner_step_serial(states, *args):
    """Every game's learner move and the opponents' replies, one thread."""
    for b in range(states.shape[0]):
        _learner_one(b, states, *args)


@njit(cache=True, parallel=True)
def learner_step_parallel(states, *args):
    """learner_step_serial with the games spread over numba's threads (same result)."""
    for b in prange(states.shape[0]):
        _learner_one(b, states, *args)


def kind_names(opponents) -> list[str]:
    """The compiled opponents named by `opponents` (one kind name, or a list of them); a
    ValueError naming :data:`OPPONENT_KINDS` for anything else."""
    names = [opponents] if isinstance(opponents, str) else opponents
    if not isinstance(names, (list, tuple)) or not all(isinstance(name, str) for name in names):
        raise ValueError(f"the compiled vector env plays opponents named {list(OPPONENT_KINDS)}, got {opponents!r}")
    unknown = [name for name in names if name not in OPPONENT_KINDS]
    if unknown:
        raise ValueError(
            f"unknown compiled opponents: the compiled vector env plays only the opponents {list(OPPONENT_KINDS)} "
            f"(without options), not {unknown}"
        )
    return list(names)


def opponent_codes(opponents, num_players: int) -> np.ndarray:
    """int64[num_players - 1] kind codes from one kind name (for every opponent seat) or one each."""
    names = one_per_seat(kind_names(opponents), num_players - 1, f"compiled opponents for {num_players} players")
    return np.array([OPPONENT_KINDS.index(name) for name in names], dtype=np.int64)


class VectorOpponentEnv(V.BatchedGames, gymnasium.vector.VectorEnv):
    """B games, the caller playing one learner seat in each against compiled opponents; see
    the module docstring. ``reset`` starts every game's episode 0 and plays the opponents up
    to the learner's first move; ``step`` plays the learner's move in every game, then the
    opponents', and returns (observation dict, learner rewards float32[B], terminations,
    truncations, infos with ``learner_seat``, ``opponent_moves``, ``final_obs``,
    ``_final_obs``)."""

    metadata: ClassVar[dict] = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}  # type: ignore[misc]
    _kernels = (learner_step_serial, learner_step_parallel)

    def __init__(
        self,
        num_envs: int,
        num_players: int = 2,
        opponents="heuristic",
        rules=DEFAULT_PRESET,
        max_turns: int | None = DEFAULT_MAX_TURNS,
        policy_input: bool = False,
        parallel: bool = False,
        copy: bool = True,
        seats=None,
        learner_seat: int | None = None,
    ):
        V.BatchedGames.__init__(self, num_envs, num_players, seats, rules, max_turns, parallel, copy)
        self.opponents = opponents
        self._kinds = opponent_codes(opponents, self.num_players)
        self._codes = np.zeros((self.num_envs, N_SEATS), dtype=np.int64)  # each game's kind by seat
        self._weights = DEFAULT_WEIGHTS.array()
        learner_seat = check_first_seat(learner_seat, self.seats, "learner_seat")  # None: every seat in turn
        # The seats the learner takes in turn, episode after episode (one: a fixed seat).
        self._seats = np.array(self.seats if learner_seat is None else [learner_seat], dtype=np.int64)
        self.policy_input = bool(policy_input)
        # The flat vector records its game: sb3 saves it with a model (agents.sb3_agent plays it).
        flat = flat_space(self.rules, self.num_players, "policy_input" if self.policy_input else "observation")
        self._obs = np.zeros((self.num_envs, flat.shape[0]), dtype=np.float32)
        self._final_obs = np.zeros_like(self._obs)
        self.learners = np.zeros(self.num_envs, dtype=np.int64)
        self._rngs = np.zeros(self.num_envs, dtype=np.int64)
        self._rewards = np.zeros(self.num_envs, dtype=np.float32)
        self._opponent_moves = np.zeros(self.num_envs, dtype=np.int64)
        self._set_spaces(observation_space(self.rules, self.num_players, flat))

    def _args(self):
        return (
            self.states,
            self._rules,
            self._active,
            self._seats,
            self._kinds,
            self._codes,
            self._weights,
            self.game_seeds,
            self.episodes,
            self.learners,
            self._rngs,
            self.max_turns,
            self.policy_input,
        )

    def _outputs(self):
        return (*super()._outputs()[:-1], self._opponent_moves)

    def _infos(self):
        return {"learner_seat": self.learners.copy(), "opponent_moves": self._opponent_moves.copy()}


def gym_vector_env(
    num_envs: int,
    num_players: int = 2,
    opponents=("heuristic",),
    rules=DEFAULT_PRESET,
    seat: int | None = None,
    max_turns: int | None = DEFAULT_MAX_TURNS,
    reward: str = "win",
    illegal_action: str = "raise",
    opponent_sampler=None,
    torch_threads: int | None = 1,
    render_mode=None,
    policy_input: bool = False,
    parallel: bool = False,
    copy: bool = True,
) -> VectorOpponentEnv:
    """The ``vector_entry_point`` of ``sorry_env/Sorry-v1``: what
    ``gymnasium.make_vec("sorry_env/Sorry-v1", num_envs, vectorization_mode="vector_entry_point", ...)``
    (and ``make_vec`` without a mode) returns, the compiled :class:`VectorOpponentEnv`.

    It takes the single env's keywords (:func:`sorry_env.agents.gym_factory.make_gym_env`) and
    refuses those it cannot honour, naming the way to get them (the ``sync`` or ``async``
    modes): opponents other than the compiled kinds (:data:`OPPONENT_KINDS`, no options), an
    ``opponent_sampler``, ``reward="points"``, ``illegal_action="lose"`` (illegal actions are
    refused before any game moves), a render mode. ``seat=None`` seats the learner at every
    seat in turn (the single env draws one at random); ``torch_threads`` is accepted and unused
    (the opponents are compiled, not networks). ``policy_input``, ``parallel`` and ``copy``
    are :class:`VectorOpponentEnv`'s."""
    other_modes = "use vectorization_mode='sync' or 'async' (the single env in each slot)"
    try:
        names = kind_names(opponents)
    except ValueError as error:  # names the way to play agents, functions or other specs
        raise ValueError(f"{error}; for agents, functions or other specs {other_modes}") from None
    refused = [  # (keyword, its value, the one value the compiled env takes, what it lacks)
        ("opponent_sampler", opponent_sampler, None, "opponent pools"),
        ("reward", reward, "win", "reward other than 'win'"),
        ("illegal_action", illegal_action, "raise", "illegal_action but 'raise' (it refuses them)"),
        ("render_mode", render_mode, None, "rendering"),
    ]
    for name, value, accepted, what in refused:
        if value != accepted:
            raise ValueError(f"the compiled vector env has no {what} ({name}={value!r}); {other_modes}")
    return VectorOpponentEnv(
        num_envs,
        num_players,
        names,
        rules,
        max_turns,
        policy_input=policy_input,
        parallel=parallel,
        copy=copy,
        learner_seat=seat,
    )
