"""Compiled helpers that agents share: successors of a position, the chance layer, and the
determinization of hidden cards.

They are thin wrappers over :mod:`sorry_env.board.engine` (the only place rules live), written in
numba so that search loops never return to Python.
"""

import numpy as np

from sorry_env.board import engine as E
from sorry_env.board.engine import action_buffer, determinize  # noqa: F401  (engine functions, kept importable here)
from sorry_env.board.geometry import N_SEATS
from sorry_env.board.rules import N_CARDS, R_HAND_SIZE, R_PACK, R_PACK_SIZE


@E.compiled(inline="always")
def after_move_into(child, state, rules, action, extras=True):
    """`child` := `state` after `action` (E.play: the move and the end of the turn, the next
    card not drawn yet). Without hands that is a chance node, the end of the game, or the
    same player's decision when a split seven is under way; with hands the next decision.
    `extras`: see the engine's COMPILE COST."""
    E.copy_state(state, child)  # not child[:] = state: see engine's COMPILE COST
    E.play(child, rules, action, extras)


@E.compiled
def is_chance_node(state, rules):
    """A running game waiting for the next card to be drawn (never the case with hands)."""
    return (
        E.winner(state) < 0
        and E.card_index(state) < 0
        and rules[R_HAND_SIZE] == 0
        and not E.fire_decision_pending(state)  # Fire and Ice: a decision before the draw
    )


@E.compiled(inline="always")
def card_chances(state, rules, chances, extras=True):
    """chances[c]: how likely a player is to have card c to play next turn, from public
    counts only. Without hands, the probability that c is the next draw (the whole pack when
    the pile is empty and will be reshuffled). With hands, the probability that a hand of
    the rules' size, dealt from all cards not yet discarded, holds at least one c.
    `extras`: see the engine's COMPILE COST (inlined: callers leave it out or pass their own)."""
    pool = np.empty(N_CARDS)
    total = 0.0
    for c in range(N_CARDS):
        pool[c] = E.pile_count(state, c)
        if extras is not None and rules[R_HAND_SIZE]:
            for seat in range(N_SEATS):
                pool[c] += E.hand_count(state, seat, c)
        total += pool[c]
    if total == 0.0:
        for c in range(N_CARDS):
            pool[c] = rules[R_PACK + c]
        total = rules[R_PACK_SIZE]
    hand = rules[R_HAND_SIZE]
    for c in range(N_CARDS):
        if extras is None or hand == 0:
            chances[c] = pool[c] / total
        else:
            missing = 1.0  # hypergeometric: no copy of c among `hand` cards
            for j in range(hand):
                missing *= max(total - pool[c] - j, 0.0) / max(total - j, 1.0)
            chances[c] = 1.0 - missing


def seed_from(rng: np.random.Generator) -> int:
    """A 32-bit seed for a compiled search, drawn from an agent's generator."""
    return int(rng.integers(0, 2**32))
