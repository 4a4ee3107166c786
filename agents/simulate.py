"""Compiled helpers that agents share: successors of a position, the chance layer, and the
determinization of hidden cards.

They are thin wrappers over :mod:`sorry_env.engine` (the only place rules live), written in
numba so that search loops never return to Python.
"""
import numpy as np
from numba import njit

from sorry_env import engine as E
from sorry_env.engine import action_buffer  # noqa: F401  (the one size of a legal-action buffer; kept importable here)
from sorry_env.rules import N_CARDS, R_HAND_SIZE, R_PACK, R_PACK_SIZE


@njit(cache=True)
def after_move_into(child, state, rules, action):
    """`child` := `state` after `action` (E.play: the move and the end of the turn, the next
    card not drawn yet). Without hands that is a chance node, the end of the game, or the
    same player's decision when a split seven is under way; with hands the next decision."""
    child[:] = state
    E.play(child, rules, action)


@njit(cache=True)
def is_chance_node(state, rules):
    """A running game waiting for the next card to be drawn (never the case with hands)."""
    return state[E.WINNER] < 0 and state[E.CARD] < 0 and rules[R_HAND_SIZE] == 0


@njit(cache=True)
def card_chances(state, rules, chances):
    """chances[c]: how likely a player is to have card c to play next turn, from public
    counts only. Without hands, the probability that c is the next draw (the whole pack when
    the pile is empty and will be reshuffled). With hands, the probability that a hand of
    the rules' size, dealt from all cards not yet discarded, holds at least one c."""
    pool = np.empty(N_CARDS)
    total = 0.0
    for c in range(N_CARDS):
        pool[c] = state[E.REMAIN + c]
        if rules[R_HAND_SIZE]:
            for seat in range(4):
                pool[c] += state[E.HANDS + seat * N_CARDS + c]
        total += pool[c]
    if total == 0.0:
        for c in range(N_CARDS):
            pool[c] = rules[R_PACK + c]
        total = rules[R_PACK_SIZE]
    hand = rules[R_HAND_SIZE]
    for c in range(N_CARDS):
        if hand == 0:
            chances[c] = pool[c] / total
        else:
            missing = 1.0  # hypergeometric: no copy of c among `hand` cards
            for j in range(hand):
                missing *= max(total - pool[c] - j, 0.0) / max(total - j, 1.0)
            chances[c] = 1.0 - missing


@njit(cache=True)
def determinize(state, rules, viewer, seed):
    """Re-draw everything `viewer` cannot see (the draw-pile order; with hands also the
    other players' hands) from `seed` alone. The unseen cards are first put in a canonical
    order, so whatever arrangement the state held (hidden information, or another
    determinization of it) has no influence on the result."""
    pos = state[E.DRAW_POS]
    unseen = np.zeros(N_CARDS, dtype=np.int64)
    for c in range(N_CARDS):
        unseen[c] = state[E.REMAIN + c]
    if rules[R_HAND_SIZE]:
        hand_sizes = np.zeros(4, dtype=np.int64)
        for seat in range(4):
            if seat != viewer:
                for c in range(N_CARDS):
                    unseen[c] += state[E.HANDS + seat * N_CARDS + c]
                    hand_sizes[seat] += state[E.HANDS + seat * N_CARDS + c]
                    state[E.HANDS + seat * N_CARDS + c] = 0
        c = 0
        for seat in range(4):
            for _ in range(hand_sizes[seat]):
                while unseen[c] == 0:
                    c += 1
                state[E.HANDS + seat * N_CARDS + c] += 1
                unseen[c] -= 1
    k = pos
    for c in range(N_CARDS):
        state[E.REMAIN + c] = unseen[c]
        for _ in range(unseen[c]):
            state[E.DECK + k] = c
            k += 1
    state[E.RNG] = seed & 0xFFFFFFFF
    E.redeal_hidden(state, rules, viewer)


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed for a compiled search, drawn from an agent's generator."""
    return int(rng.integers(0, 2**32))
