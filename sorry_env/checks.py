"""Input checks at the public edges: short quotes of bad input, and the state array's header.

The compiled functions of :mod:`sorry_env.board.engine` trust their arguments (numba does not
check indices; a corrupted state can read or write out of bounds and crash the process).
The Python-level functions of :mod:`sorry_env.board.game` call :func:`check_state` once per call,
before any compiled code, so a state array that did not come from the engine is a
ValueError there instead.
"""

from __future__ import annotations

import reprlib
import unicodedata

import numpy as np

from .board import engine as E
from .board.geometry import HOME, N_SEATS, START, TRACK
from .board.rules import N_CARDS, R_FIRE_ICE, R_PACK, R_PACK_SIZE, R_PAWNS

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


def is_integer(value) -> bool:
    """Whether `value` is a Python or numpy integer and not a bool (JSON's true is not a count)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_state_keys(d, allowed: set[str], required: tuple[str, ...]) -> None:
    """ValueError unless `d` is a dict (a game's state dict) with every key of `required` and
    none outside `allowed`."""
    if not isinstance(d, dict):
        raise ValueError(f"state must be a dict, got {type(d).__name__}")  # noqa: TRY004 (bad input: ValueError)
    unknown = set(d) - allowed
    if unknown:
        raise ValueError(f"unknown state keys {excerpt(sorted(map(str, unknown)))}; allowed: {sorted(allowed)}")
    for key in required:
        if key not in d:
            raise ValueError(f"state needs {key!r}")


def printable(text: str) -> str:
    """`text` with every control or format character (ESC and the terminal sequences it
    starts, CR, BEL, bidirectional overrides, ...) written as a visible escape: text read from
    a file is printed to a terminal only this way."""
    return "".join(
        ch if ch == " " or unicodedata.category(ch)[0] not in "CZ" else ch.encode("unicode_escape").decode("ascii")
        for ch in text
    )


# What _header_problem's codes mean (0: none).
_PROBLEMS = (
    None,
    "ACTIVE must mark 2 to 4 seats with 0/1",
    "TO_MOVE is not a seat in play",
    "CARD is not -1 or a card index 0..10",
    "WINNER is not -1 or a seat in play",
    "TURN must be >= 0 and DRAW_AGAIN 0 or 1",
    "pawn codes must be 0..66 for the pawns in play and -1 elsewhere",
    "DRAW_POS is outside the pack",
    "REMAIN counts are outside 0..the pack",
    "DECK holds something that is not a card index",
    "HANDS counts must be 0..5",
    "SEVEN_LEFT must be 0..6 and SEVEN_MOVED 0..255",
    "FIRE, ICE and FIRE_PENDING must be 0 without Fire and Ice",
    "FIRE must be 0 (middle) or 1 + seat*4 + slot of a pawn in play (track or safety zone)",
    "ICE must be 0 (middle) or 1 + a track square holding a pawn",
    "FIRE_PENDING must be 0, or 1 with no card drawn and a fire move to decide on",
)


@E.compiled
def _header_problem(state, rules, extras=True):
    """Index into _PROBLEMS of the first header field out of range (compiled: a few hundred
    comparisons take well under a microsecond; the caller has checked the shape and dtype).
    The groups run in the order of _PROBLEMS, so the lowest code found is the one reported.
    `extras`: the engine's (COMPILE COST); None for plain rules leaves the token checks out."""
    ppp = rules[R_PAWNS]
    problem = _turn_problem(state)
    if problem == 0:
        problem = _pawn_problem(state, ppp)
    if problem == 0:
        problem = _pile_problem(state, rules)
    if problem == 0:
        problem = _token_problem(state, rules, ppp, extras)
    return problem


@E.compiled(inline="always")
def _turn_problem(state):
    """Seats in play, player to move, card, winner and turn counters (codes 1 to 5)."""
    n_active = 0
    for seat in range(N_SEATS):
        if state[E.ACTIVE + seat] != 0 and state[E.ACTIVE + seat] != 1:
            return 1
        n_active += state[E.ACTIVE + seat]
    if n_active < 2:
        return 1
    to_move = state[E.TO_MOVE]
    if to_move < 0 or to_move > 3 or state[E.ACTIVE + to_move] != 1:
        return 2
    if state[E.CARD] < -1 or state[E.CARD] >= N_CARDS:
        return 3
    winner = state[E.WINNER]
    if winner != -1 and (winner < 0 or winner > 3 or state[E.ACTIVE + winner] != 1):
        return 4
    if state[E.TURN] < 0 or (state[E.DRAW_AGAIN] != 0 and state[E.DRAW_AGAIN] != 1):
        return 5
    return 0


@E.compiled(inline="always")
def _pawn_problem(state, ppp):
    """Pawn codes: in range for the pawns in play, -1 in every other slot (code 6)."""
    for seat in range(N_SEATS):
        for slot in range(E.MAX_SLOTS):
            code = state[E.PAWNS + seat * E.MAX_SLOTS + slot]
            if state[E.ACTIVE + seat] == 1 and slot < ppp:
                if code < 0 or code > START:
                    return 6
            elif code != -1:
                return 6
    return 0


@E.compiled(inline="always")
def _pile_problem(state, rules):
    """Draw position, pile counts, deck, hands and a split seven (codes 7 to 11)."""
    size = rules[R_PACK_SIZE]
    if state[E.DRAW_POS] < 0 or state[E.DRAW_POS] > size:
        return 7
    for c in range(N_CARDS):
        if state[E.REMAIN + c] < 0 or state[E.REMAIN + c] > rules[R_PACK + c]:
            return 8
    for k in range(size):
        if state[E.DECK + k] < 0 or state[E.DECK + k] >= N_CARDS:
            return 9
    for k in range(4 * N_CARDS):
        if state[E.HANDS + k] < 0 or state[E.HANDS + k] > 5:
            return 10
    if state[E.SEVEN_LEFT] < 0 or state[E.SEVEN_LEFT] > 6 or state[E.SEVEN_MOVED] < 0 or state[E.SEVEN_MOVED] > 255:
        return 11
    return 0


@E.compiled(inline="always")
def _token_problem(state, rules, ppp, extras=True):
    """Fire and Ice fields (see _header_problem)."""
    fire, ice, pending = state[E.FIRE], state[E.ICE], state[E.FIRE_PENDING]
    if extras is None or rules[R_FIRE_ICE] == 0:
        return 12 if fire != 0 or ice != 0 or pending != 0 else 0
    if fire != 0:
        seat, slot = (fire - 1) // E.MAX_SLOTS, (fire - 1) % E.MAX_SLOTS
        if fire < 0 or seat > 3 or slot >= ppp or state[E.ACTIVE + seat] != 1:
            return 13
        if state[E.PAWNS + fire - 1] >= HOME:
            return 13
    if ice != 0:
        if ice < 0 or ice > TRACK:
            return 14
        found = False
        for seat in range(N_SEATS):
            for slot in range(ppp):
                if state[E.ACTIVE + seat] == 1 and state[E.PAWNS + seat * E.MAX_SLOTS + slot] == ice - 1:
                    found = True
        if not found:
            return 14
    if pending != 0 and (pending != 1 or state[E.CARD] != -1 or E.fire_move_target(state, rules, state[E.TO_MOVE]) < 0):
        return 15
    return 0


def check_state(state, rules_array: np.ndarray, *extras) -> None:
    """ValueError unless `state` is an int64 array of the engine's shape whose header fields
    are in range for the rules: seats, player to move, card, winner, counters, pawn codes,
    draw position, pile counts, deck cards, hands, a split seven and the Fire and Ice tokens. The shape and dtype are
    checked in Python, the fields by a compiled loop (about a microsecond); it does not replay
    the game, so a state can pass and still be one no game reaches, but it cannot send
    compiled code out of bounds. `extras`: ``sorry_env.board.game.extras_args`` of the rules."""
    if not isinstance(state, np.ndarray) or state.dtype != np.int64 or state.shape != (E.STATE_SIZE,):
        what = f"{state.dtype} array of shape {state.shape}" if isinstance(state, np.ndarray) else type(state).__name__
        raise ValueError(f"state must be the engine's int64 array of shape ({E.STATE_SIZE},), got a {what}")
    problem = _header_problem(state, rules_array, *extras)
    if problem:
        raise ValueError(f"state: {_PROBLEMS[problem]}")


# The sizes a network's description may give (a policy file's metadata, a config's
# network.hidden): the shipped networks are 2 layers of 256; these caps are far above any of
# them and keep a description from making a loader set aside gigabytes.
MAX_LAYERS = 16  # hidden layers
MAX_WIDTH = 16_384  # units per hidden layer
MAX_PARAMETERS = 50_000_000  # weights and biases of one file's networks together


def check_layer_widths(widths, where: str) -> list[int]:
    """`widths` (hidden-layer widths named `where`) if it is a list of at most MAX_LAYERS
    integers 1..MAX_WIDTH; ValueError quoting an excerpt otherwise. The count is checked
    before any element is looked at, so a list of millions is refused at once."""
    if (
        not isinstance(widths, list)
        or len(widths) > MAX_LAYERS
        or not all(isinstance(w, int) and not isinstance(w, bool) and 0 < w <= MAX_WIDTH for w in widths)
    ):
        raise ValueError(
            f"{where} must be a list of at most {MAX_LAYERS} layers of 1..{MAX_WIDTH:,} units, got {excerpt(widths)}"
        )
    return widths


def mlp_parameters(sizes: list[int]) -> int:
    """Weights and biases of an MLP whose layers have these sizes (input, hidden..., output)."""
    return sum(a * b + b for a, b in zip(sizes[:-1], sizes[1:]))


def check_parameter_count(where: str, parameters: int) -> None:
    """ValueError if networks described by `where` would hold more than MAX_PARAMETERS
    numbers: every network loader and config checks this before it builds anything."""
    if parameters > MAX_PARAMETERS:
        raise ValueError(
            f"{where} describes networks of {parameters:,} parameters, more than the {MAX_PARAMETERS:,} allowed"
        )
