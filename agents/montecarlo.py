"""`montecarlo` (alias `mcts`, its old name): flat Monte Carlo search over the root moves with
determinized hidden cards and short compiled playouts.

A playout re-draws what the player cannot see (the draw-pile order; with hands the other
players' hands) from the agent's own generator, plays a root move, then `rollout_plies`
moves of an epsilon-greedy heuristic player for every seat, and scores the result: 1 for a
win of the player's side, 0 for a loss, otherwise the heuristic evaluation read as a chance
of winning (:func:`sorry_env.board.evaluation.win_chance`), or with ``value=PATH`` the chance a
learned value network gives (:mod:`sorry_env.agents.value_net`, fitted by :mod:`sorry_env.training.value_fit`).

The root moves are compared with common random numbers: in each sampled world (one seed for
the hidden cards and the playout's random choices) every root move is played out, so the
differences between moves are not drowned in the luck of the draw, and the move with the
best mean wins (flat Monte Carlo; measured, a UCB1 bandit or successive halving over the
moves did no better). Root moves that lead to the same position (the two orders of a split
seven that touch nothing between them) are played once.
"""

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, Weights, evaluate, win_chance
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.rules import DEFAULT_MAX_TURNS
from sorry_env.board.scripted_choices import heuristic_choice
from sorry_env.board.simulate import action_buffer, after_move_into, determinize, is_chance_node, seed_from

from .base import ChoosingAgent, Turn
from .value_net import ValueLeaves, net_win_chance

MAX_TURNS = DEFAULT_MAX_TURNS  # a playout "to the end" stops where the env truncates
SEED_RANGE = 1 << 31


@njit(cache=True)
def playout_decision(world, rules, buf):
    """The legal actions (into buf; their count) of a playout's next decision, drawing the
    card first at a chance node; 0 when the game is over or at the turn limit."""
    if not E.is_running(world, MAX_TURNS):
        return 0
    if is_chance_node(world, rules):
        E.draw(world, rules)
    return E.legal_actions(world, rules, buf)


@njit(cache=True)
def playout_result(world, rules, w, me, params, sizes, obs):
    """A playout's result for `me`'s side in [0, 1]: the outcome, or if the game goes on the
    value network's (params, sizes) chance of winning, or without a network the hand-written
    evaluation's."""
    if E.winner(world) >= 0:
        return 1.0 if E.same_side(rules, me, E.winner(world)) else 0.0
    if sizes.shape[0] > 0:
        return net_win_chance(world, rules, params, sizes, me, obs)
    return win_chance(world, rules, w, evaluate(world, rules, w, me))


@njit(cache=True)
def rollout_value(world, rules, w, me, plies, epsilon, buf, params, sizes, obs):
    """Play out `world` (in place) for `plies` moves (0: to the end) with an epsilon-greedy
    heuristic player; the :func:`playout_result`."""
    limit = plies if plies > 0 else MAX_TURNS
    for _ in range(limit):
        n = playout_decision(world, rules, buf)
        if n == 0:
            break
        if n == 1:
            action = buf[0]
        elif E.randint(world, 1 << 20) < epsilon * (1 << 20):
            action = buf[E.randint(world, n)]
        else:
            action = heuristic_choice(world, rules, w, buf, n)
        E.play(world, rules, action)
    return playout_result(world, rules, w, me, params, sizes, obs)


@njit(cache=True)
def distinct_moves(state, rules, legal, n, moves, same_as):
    """moves[:k] := the first of legal[:n] to reach each distinct position, and
    same_as[j] := the index into moves of the one legal[j] reaches; returns k."""
    kids = np.empty((n, state.shape[0]), dtype=np.int64)
    k = 0
    for m in range(n):
        after_move_into(kids[k], state, rules, legal[m])
        same_as[m] = k
        for u in range(k):
            if np.array_equal(kids[u], kids[k]):
                same_as[m] = u
                break
        if same_as[m] == k:
            moves[k] = legal[m]
            k += 1
    return k


@njit(cache=True)
def monte_carlo_values(state, rules, w, legal, n, seed, iterations, rollout_plies, epsilon, params, sizes, values):
    """values[k] := mean playout result of legal[k] over the same sampled worlds, about
    `iterations` playouts in all (moves reaching the same position share one estimate)."""
    me = E.to_move(state)
    moves = np.empty(n, dtype=np.int64)
    same_as = np.empty(n, dtype=np.int64)
    k = distinct_moves(state, rules, legal, n, moves, same_as)
    totals = np.zeros(k)
    seeds = np.zeros(E.STATE_SIZE, dtype=np.int64)  # a generator for the worlds' seeds
    E.seed_generator(seeds, seed & 0xFFFFFFFF)
    root = np.empty_like(state)
    world = np.empty_like(state)
    buf = action_buffer(rules)
    obs = np.empty(OBS_SIZE, dtype=np.float32)
    rounds = max(1, iterations // k) if k > 1 else 0  # one move: nothing to compare
    for _ in range(rounds):
        world_seed = E.randint(seeds, SEED_RANGE)
        for m in range(k):
            root[:] = state
            determinize(root, rules, me, world_seed)
            after_move_into(world, root, rules, moves[m])
            totals[m] += rollout_value(world, rules, w, me, rollout_plies, epsilon, buf, params, sizes, obs)
    for j in range(n):
        values[j] = totals[same_as[j]] / max(rounds, 1)


@njit(cache=True)
def monte_carlo_choice(state, rules, w, legal, n, seed, iterations, rollout_plies, epsilon, params, sizes):
    """The root move (of legal[:n]) with the best mean playout result (the first on ties:
    the first of moves reaching the same position)."""
    values = np.empty(n)
    monte_carlo_values(state, rules, w, legal, n, seed, iterations, rollout_plies, epsilon, params, sizes, values)
    return legal[np.argmax(values)]


class MonteCarloAgent(ValueLeaves, ChoosingAgent):
    name = "montecarlo"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int = 400,
        rollout_plies: int = 6,
        epsilon: float = 0.1,
        value: str | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
    ):
        """iterations: playouts per move (about); rollout_plies: moves per playout before
        the evaluation takes over (0: play to the end); epsilon: chance of a uniformly
        random move in a playout; value: an afterstate policy file whose network scores
        the playouts' last positions (default: the hand-written evaluation)."""
        if iterations < 1 or rollout_plies < 0 or not 0 <= epsilon <= 1:
            raise ValueError("montecarlo needs iterations >= 1, rollout_plies >= 0 and 0 <= epsilon <= 1")
        self.iterations = int(iterations)
        self.rollout_plies = int(rollout_plies)
        self.epsilon = float(epsilon)
        self.weights = weights.array()
        self.load_value(value)
        self.reset(seed)

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        self.check_turns([turn])
        return int(
            monte_carlo_choice(
                turn.state,
                game.rules_array(turn.rules),
                self.weights,
                legal,
                len(legal),
                seed_from(self.rng),
                self.iterations,
                self.rollout_plies,
                self.epsilon,
                self.params,
                self.sizes,
            )
        )
