"""`expectimax`: depth-limited search over the player's moves, the next cards (weighted by
the public draw-pile counts) and the following players' replies, with the heuristic's
position evaluation at the leaves.

Every player, opponents included, is assumed to pick the move best for itself (max-n: a node
carries one score per seat), which is the plain expectiminimax in a two-player game. A 2
gives the same player another card, so "the next decision" may be the same player's again;
the search follows the engine's turn order and needs no special case for it.

Depth counts decisions: 1 is the heuristic (score each move's resulting position), 2 adds
every next card and the reply chosen for it, 3 (the default) one more card and decision, and
so on. Leaves are scored as chances of winning (:func:`sorry_env.board.evaluation.win_chance`), so the
search maximizes expected wins rather than expected equity. With ``model_others=1`` the other
side's decisions are not searched but played as the heuristic would (cheaper, and exact
against the heuristic).

With hands (play for points) the next player's options come from a hidden hand rather than
a public draw, so there is no chance layer to expand: the search runs on `samples`
determinizations of the hidden cards and adds up the root scores.
"""

import numpy as np
from numba import njit

from sorry_env.board import engine as E
from sorry_env.board import game
from sorry_env.board.evaluation import DEFAULT_WEIGHTS, Weights, seat_equities, seat_score, win_chance
from sorry_env.board.geometry import N_SEATS
from sorry_env.board.observation import OBS_SIZE
from sorry_env.board.rules import N_CARDS
from sorry_env.board.scripted_choices import heuristic_choice
from sorry_env.board.simulate import (
    action_buffer,
    after_move_into,
    card_chances,
    determinize,
    is_chance_node,
    seed_from,
)

from .base import ChoosingAgent, Turn
from .value_net import ValueLeaves, net_win_chance


@njit(cache=True)
def _static_scores(state, rules, w, params, sizes, mover, scores):
    """Each seat's evaluation as a chance of winning (a long shot is worth more to a player
    far behind than its equity says): the value network's when one is given (params not
    empty). An afterstate network values the position after a move as the seat that made it
    (`mover`) sees it, the view it learned from; with two sides the other side's chance is the
    complement, with more each seat's own view."""
    if params.shape[0] > 0:
        obs = np.empty(OBS_SIZE, dtype=np.float32)
        winner = E.winner(state)
        two_sides = E.num_sides(rules, state) == 2
        mover_chance = net_win_chance(state, rules, params, sizes, mover, obs) if winner < 0 else 0.0
        for seat in range(N_SEATS):
            if not E.is_active(state, seat):
                scores[seat] = 0.0
            elif winner >= 0:
                scores[seat] = 1.0 if E.same_side(rules, seat, winner) else 0.0
            elif E.same_side(rules, seat, mover):
                scores[seat] = mover_chance
            elif two_sides:
                scores[seat] = 1.0 - mover_chance
            else:
                scores[seat] = net_win_chance(state, rules, params, sizes, seat, obs)
        return
    equity = np.empty(4)
    seat_equities(state, rules, w, equity)
    for seat in range(N_SEATS):
        if E.is_active(state, seat):
            scores[seat] = win_chance(state, rules, w, seat_score(state, rules, w, equity, seat))
        else:
            scores[seat] = 0.0


@njit(cache=True)
def node_scores(state, rules, w, params, sizes, decisions, root, model_others, mover, scores):
    """scores[seat] := each seat's expected score at `state` (after a move's end of turn),
    searching `decisions` more decisions; `mover` made the move that led to `state`. With
    `model_others`, players not on `root`'s side are assumed to play the heuristic's move
    instead of being searched. (One self-recursive function: numba's cache cannot reload
    mutually recursive ones.)"""
    if E.winner(state) >= 0 or decisions == 0:
        _static_scores(state, rules, w, params, sizes, mover, scores)
        return
    chance = is_chance_node(state, rules)
    probs = np.ones(N_CARDS)
    if chance:
        card_chances(state, rules, probs)
    decision = np.empty_like(state)
    child = np.empty_like(state)
    legal = action_buffer(rules)
    sub = np.empty(4)
    best_scores = np.empty(4)
    scores[:] = 0.0
    # A chance node: every possible next card, then the best move with it. Otherwise the
    # same, with the one "outcome" that the player to move already has its options.
    for c in range(N_CARDS if chance else 1):
        if probs[c] == 0.0:
            continue
        decision[:] = state
        if chance:
            E.deal(decision, rules, c)  # reshuffles an empty pile first
        me = E.to_move(decision)
        n = E.legal_actions(decision, rules, legal)
        if model_others and not E.same_side(rules, root, me):
            after_move_into(child, decision, rules, heuristic_choice(decision, rules, w, legal, n))
            node_scores(child, rules, w, params, sizes, decisions - 1, root, model_others, me, best_scores)
        else:
            best = -np.inf
            for k in range(n):
                after_move_into(child, decision, rules, legal[k])
                node_scores(child, rules, w, params, sizes, decisions - 1, root, model_others, me, sub)
                if sub[me] > best:
                    best = sub[me]
                    best_scores[:] = sub
        scores += probs[c] * best_scores


@njit(cache=True)
def root_scores(state, rules, w, params, sizes, legal, n, depth, model_others, totals):
    """totals[k] += the acting player's expected score after legal[k] (depth-decision
    search from this root)."""
    me = E.to_move(state)
    child = np.empty_like(state)
    sub = np.empty(4)
    for k in range(n):
        after_move_into(child, state, rules, legal[k])
        node_scores(child, rules, w, params, sizes, depth - 1, me, model_others, me, sub)
        totals[k] += sub[me]


class ExpectimaxAgent(ValueLeaves, ChoosingAgent):
    name = "expectimax"

    def __init__(
        self,
        seed: int | None = None,
        depth: int = 3,
        model_others: int = 0,
        samples: int = 8,
        value: str | None = None,
        weights: Weights = DEFAULT_WEIGHTS,
    ):
        """depth: decisions searched; model_others: 1 to assume the other side plays the
        heuristic's move (searched only for the own side); samples: determinizations of the
        hidden hands (play for points only); value: an afterstate value network file that
        scores the leaves (default: the hand-written evaluation)."""
        if depth < 1 or samples < 1:
            raise ValueError(f"depth and samples must be at least 1, got depth={depth!r}, samples={samples!r}")
        self.load_value(value)
        self.depth = int(depth)
        self.model_others = bool(model_others)
        self.samples = int(samples)
        self.weights = weights.array()
        self.reset(seed)

    def choose(self, turn: Turn, legal: np.ndarray) -> int:
        self.check_turns([turn])
        rules_array = game.rules_array(turn.rules)
        totals = np.zeros(len(legal))
        search = (self.weights, self.params, self.sizes, legal, len(legal), self.depth, self.model_others, totals)
        if turn.rules.hand_size:
            for _ in range(self.samples):
                world = turn.state.copy()
                determinize(world, rules_array, turn.seat, seed_from(self.rng))
                root_scores(world, rules_array, *search)
        else:
            root_scores(turn.state, rules_array, *search)
        return int(legal[np.argmax(totals)])
