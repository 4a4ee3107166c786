"""Input checks at the public edges: short quotes of bad input, and the state array's header.

The compiled functions of :mod:`sorry_env.engine` trust their arguments (numba does not
check indices; a corrupted state can read or write out of bounds and crash the process).
The Python-level functions of :mod:`sorry_env.game` call :func:`check_state` once per call,
before any compiled code, so a state array that did not come from the engine is a
ValueError there instead.
"""
from __future__ import annotations

import reprlib

import numpy as np

from . import engine as E
from .geometry import START
from .rules import N_CARDS, R_PACK, R_PACK_SIZE, R_PAWNS

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxstring, _repr.maxother, _repr.maxlong = 3, 40, 40, 40
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6


def excerpt(value, limit: int = 80) -> str:
    """A short quote of `value` for an error message: never the whole of a large or deeply
    nested input (reprlib cuts depth and length; the result is at most `limit` characters)."""
    try:
        text = _repr.repr(value)
    except (RecursionError, ValueError):  # a pathological __repr__, or int digits over Python's limit
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def check_state(state, rules_array: np.ndarray) -> None:
    """ValueError unless `state` is an int64 array of the engine's shape whose header fields
    are in range for the rules: seats, player to move, card, winner, counters, pawn codes,
    draw position, pile counts, deck cards, hands and a split seven. A few vectorized
    comparisons (microseconds); it does not replay the game, so a state can pass and still
    be one no game reaches, but it cannot send compiled code out of bounds."""
    if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.shape != (E.STATE_SIZE,):
        what = f"{state.dtype} array of shape {state.shape}" if isinstance(state, np.ndarray) else \
            type(state).__name__
        raise ValueError(f"state must be the engine's int64 array of shape ({E.STATE_SIZE},), got a {what}")
    active = state[E.ACTIVE:E.ACTIVE + 4]
    if ((active != 0) & (active != 1)).any() or not 2 <= active.sum() <= 4:
        raise ValueError(f"state: ACTIVE must mark 2 to 4 seats with 0/1, got {active.tolist()}")
    to_move, card, winner = int(state[E.TO_MOVE]), int(state[E.CARD]), int(state[E.WINNER])
    if not 0 <= to_move < 4 or not active[to_move]:
        raise ValueError(f"state: TO_MOVE {to_move} is not a seat in play")
    if not -1 <= card < N_CARDS:
        raise ValueError(f"state: CARD {card} is not -1 or a card index 0..{N_CARDS - 1}")
    if winner != -1 and not (0 <= winner < 4 and active[winner]):
        raise ValueError(f"state: WINNER {winner} is not -1 or a seat in play")
    if state[E.TURN] < 0 or state[E.DRAW_AGAIN] not in (0, 1):
        raise ValueError(f"state: TURN {int(state[E.TURN])} / DRAW_AGAIN {int(state[E.DRAW_AGAIN])} out of range")
    ppp, pack_size = int(rules_array[R_PAWNS]), int(rules_array[R_PACK_SIZE])
    pawns = state[E.PAWNS:E.PAWNS + 16].reshape(4, E.MAX_SLOTS)
    used = (active[:, None] == 1) & (np.arange(E.MAX_SLOTS)[None, :] < ppp)
    if ((pawns < 0) | (pawns > START))[used].any() or (pawns[~used] != -1).any():
        raise ValueError("state: pawn codes must be 0..66 for the pawns in play and -1 elsewhere")
    if not 0 <= state[E.DRAW_POS] <= pack_size:
        raise ValueError(f"state: DRAW_POS {int(state[E.DRAW_POS])} is outside the pack (0..{pack_size})")
    pack = rules_array[R_PACK:R_PACK + N_CARDS]
    remain = state[E.REMAIN:E.REMAIN + N_CARDS]
    if (remain < 0).any() or (remain > pack).any():
        raise ValueError(f"state: REMAIN counts {remain.tolist()} are outside 0..the pack {pack.tolist()}")
    deck = state[E.DECK:E.DECK + pack_size]
    if ((deck < 0) | (deck >= N_CARDS)).any():
        raise ValueError("state: DECK holds something that is not a card index")
    hands = state[E.HANDS:E.HANDS + 4 * N_CARDS]
    if (hands < 0).any() or (hands > 5).any():
        raise ValueError("state: HANDS counts must be 0..5")
    if not 0 <= state[E.SEVEN_LEFT] <= 6 or not 0 <= state[E.SEVEN_MOVED] < 256:
        raise ValueError(f"state: SEVEN_LEFT {int(state[E.SEVEN_LEFT])} / SEVEN_MOVED "
                         f"{int(state[E.SEVEN_MOVED])} out of range")
