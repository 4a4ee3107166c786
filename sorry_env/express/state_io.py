"""JSON-able Sorry! Express state dicts: the public way to write down, load and inspect a
position.

Schema (``bases``, ``pawns`` and ``to_move`` required)::

    {
      "to_move": 0,                              # seat to play, 0 .. n-1
      "turn": 0,                                 # turns (rolls) finished (counts towards truncation)
      "bases": ["Red", "Blue", "Yellow"],        # each player's home-base colour (distinct);
                                                 # its length is the number of players (2..4)
      "pawns": [{"Red": 2, "Green": 1}, {}, {"Blue": 1}],  # pawns each player owns, per colour
      "dice": ["Red", "Wild", "Sorry!"]          # dice left to resolve this turn; absent or
    }                                            # null: a new roll from the seed

The Start base holds the pawns nobody owns (four of each colour in all). A player's home
section is their pawns of their base's colour, the waiting area the rest. The dice must be
the faces left of one roll (at most two Slides, one Sorry!, three dice) and at least one of
them must be playable (otherwise the turn would already be over). The generator state is
never stored: future rolls come from the seed given to :func:`state_from_dict`.

``state_to_dict`` lists each player's colours with a non-zero count, in colour order, and
the dice in face order, so ``state_to_dict(state_from_dict(d, seed))`` equals ``d`` once
``d`` is written that way and has ``dice``.
"""

import numpy as np

from ..board.game import check_seed
from ..board.render import COLOUR_NAMES
from ..checks import check_state_keys, excerpt, is_integer
from . import engine as E
from . import game
from .game import FACE_NAMES, PLAYER_COUNTS

KEYS = {"to_move", "turn", "bases", "pawns", "dice"}


MAX_TURN = 2**62  # the engine counts turns in int64 (as the board game's state_io)


def _colour(value) -> bool:
    """A colour name (and nothing unhashable or equal to one by accident)."""
    return isinstance(value, str) and value in COLOUR_NAMES


def state_from_dict(d, seed: int) -> np.ndarray:
    """A validated engine state from a state dict; future rolls (and a roll when ``dice`` is
    absent) come from `seed`. Every malformed or impossible state is a ValueError naming the
    problem and quoting at most a short excerpt of the input (no OverflowError,
    RecursionError or TypeError escapes); an accepted state is playable (the player to move
    has a playable die) and every count in it is within the game's bounds."""
    try:
        return _state_from_dict(d, seed)
    except (TypeError, OverflowError, RecursionError, KeyError, IndexError, AttributeError) as exc:
        # A check above missed a shape: still a short ValueError, never the input echoed whole.
        raise ValueError(f"malformed state ({type(exc).__name__}: {excerpt(str(exc), 120)})") from None


def _state_from_dict(d, seed: int) -> np.ndarray:
    """The checks and the build, in the order their errors take precedence."""
    check_seed(seed)
    check_state_keys(d, KEYS, ("bases", "pawns", "to_move"))
    bases = _bases(d["bases"])
    n = len(bases)
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    state[E.N_PLAYERS] = n
    state[E.BASES : E.BASES + 4] = -1
    for seat, colour in enumerate(bases):
        state[E.BASES + seat] = COLOUR_NAMES.index(colour)
    _place_pawns(d["pawns"], bases, state)
    to_move = d["to_move"]
    if not is_integer(to_move) or not 0 <= to_move < n:
        raise ValueError(f"to_move must be a player 0..{n - 1}, got {excerpt(to_move)}")
    state[E.TO_MOVE] = to_move
    turn = d.get("turn", 0)
    if not is_integer(turn) or not 0 <= turn < MAX_TURN:
        raise ValueError(f"turn must be a non-negative integer below 2**62, got {excerpt(turn)}")
    state[E.TURN] = turn
    state[E.WINNER] = -1
    state[E.RNG] = int(seed) & 0xFFFFFFFF
    dice = d.get("dice")
    if dice is None:
        E.roll_turn(state)  # a roll that changes nothing: that turn is over, the next seat rolls
        return state
    _set_dice(dice, to_move, state)
    return state


def _bases(bases) -> list:
    """The players' home-base colours, checked: 2 to 4 players, each a different colour."""
    if not isinstance(bases, (list, tuple)) or len(bases) not in PLAYER_COUNTS:
        raise ValueError(f"'bases' must list one colour per player (2 to 4 players), got {excerpt(bases)}")
    for seat, colour in enumerate(bases):
        if not _colour(colour):
            raise ValueError(
                f"bases: player {seat}'s colour must be one of {list(COLOUR_NAMES)}, got {excerpt(colour)}"
            )
    if len(set(bases)) != len(bases):
        raise ValueError(f"bases: every home base has its own colour, got {list(bases)}")
    return list(bases)


def _place_pawns(pawns, bases: list, state: np.ndarray) -> None:
    """Each player's pawns by colour into `state`, checked: counts in range, no colour owned
    more than its pawns, no player already home with all four (the game would be over)."""
    n = len(bases)
    if not isinstance(pawns, (list, tuple)) or len(pawns) != n:
        raise ValueError(f"'pawns' must list one dict per player ({n}, as 'bases'), got {excerpt(pawns)}")
    for seat, counts in enumerate(pawns):
        # Each count is at most the pawns of a colour, so the sums below cannot overflow.
        if (
            not isinstance(counts, dict)
            or not all(_colour(c) for c in counts)
            or any(not is_integer(v) or not 0 <= v <= E.PAWNS_PER_COLOUR for v in counts.values())
        ):
            raise ValueError(
                f"pawns: player {seat} must map colour names {list(COLOUR_NAMES)} to "
                f"non-negative integer counts of at most {E.PAWNS_PER_COLOUR}, got {excerpt(counts)}"
            )
        for colour, count in counts.items():
            state[E.OWNED + seat * E.N_COLOURS + COLOUR_NAMES.index(colour)] = count
    for c, colour in enumerate(COLOUR_NAMES):
        owned = E.PAWNS_PER_COLOUR - int(E.start_count(state, c))
        if owned > E.PAWNS_PER_COLOUR:
            raise ValueError(f"pawns: the players own {owned} {colour} pawns; there are only {E.PAWNS_PER_COLOUR}")
    for seat in range(n):
        if E.home_count(state, seat) == E.PAWNS_PER_COLOUR:
            raise ValueError(
                f"player {seat}'s home section already holds all four {bases[seat]} pawns: the game is over"
            )


def _set_dice(dice, to_move: int, state: np.ndarray) -> None:
    """The dice of a roll still to be played into `state`, checked: faces one roll can show,
    at least one of them playable."""
    if (
        not isinstance(dice, (list, tuple))
        or len(dice) > 3
        or any(not isinstance(f, str) or f not in FACE_NAMES for f in dice)
    ):
        raise ValueError(
            f"dice must list up to 3 faces out of {list(FACE_NAMES)} (or be null to roll), got {excerpt(dice)}"
        )
    for f in dice:
        state[E.DICE + FACE_NAMES.index(f)] += 1
    if state[E.DICE + E.SLIDE] > 2 or state[E.DICE + E.SORRY] > 1:
        raise ValueError(
            f"dice {list(dice)} cannot come from one roll: two dice have a Slide face, only the third has Sorry!"
        )
    if not E.any_playable(state):
        raise ValueError(
            f"none of the dice {list(dice)} can change anything for player {to_move}, so "
            "the turn would already be over; give a playable die or null to roll"
        )


def state_to_dict(state: np.ndarray) -> dict:
    """The state dict of an engine state."""
    return {
        "to_move": game.to_move(state),
        "turn": game.turn(state),
        "bases": [game.base_colour(state, seat) for seat in range(game.num_players(state))],
        "pawns": [{COLOUR_NAMES[c]: int(count) for c, count in enumerate(row) if count} for row in game.owned(state)],
        "dice": game.dice(state),
    }
