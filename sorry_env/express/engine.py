"""The Sorry! Express rules engine: a game state as one small int64 array and pure compiled
functions on it. This module is the only place the Express rules live; the env, the state
dicts and the agents call these functions.

Pieces: 16 pawns, four of each colour (Red, Blue, Yellow, Green), all in the common Start
base at first. Players are seats ``0 .. n-1``; each owns a home base, first of colour ``k``
for player ``k``. A player's *home section* is the pawns they own of their base's current
colour; the *waiting area* is every other pawn they own. So the state stores, per player,
how many pawns of each colour they own, and per player the base colour; the Start base is
what nobody owns.

State array layout (``STATE_SIZE`` int64 entries)
-------------------------------------------------
===============  =====  ==========================================================
offset           size   content
===============  =====  ==========================================================
``N_PLAYERS``    1      2, 3 or 4 (seats 0 .. n-1 play)
``TO_MOVE``      1      seat to play
``WINNER``       1      winning seat, -1 while the game runs
``TURN``         1      turns (rolls) finished so far
``RNG``          1      32-bit generator state; every roll comes from it
``DICE``         7      dice of the current roll not yet used, counted per face
                        (:data:`FACE_NAMES` order); all zero once the game is over
``BASES``        4      colour of each seat's home base (-1: seat not in play)
``OWNED``        16     ``OWNED + seat*4 + colour``: pawns of that colour the seat owns
===============  =====  ==========================================================

Randomness lives in the state (``RNG``): a state plus an action fully determines the next
state, with no global random state anywhere.

Turn flow
---------
A turn starts with a roll of the three dice. The player resolves them one at a time, in an
order they choose: each action names a face among the dice left and the choice for it. A
die is *playable* when its result can change something now (the action mask lists exactly
the playable dice's choices). After every die the win is checked; then, if no die left is
playable, the turn ends: the dice left are discarded, ``TURN`` grows by one and the next
seat in turn order rolls. A roll with no playable die ends that turn at once (and counts as
a turn). A die that cannot change anything *now* but might after another die (a Slide can
turn a home section into a waiting area, or the reverse) stays in the pool until the turn
ends, so the player's choice of order is never cut short.

Actions (``N_ACTIONS`` = 57, relative to the player to move)
-----------------------------------------------------------
``k`` is an opponent's place after the mover in turn order (1 .. n-1; seat
``(mover + k) % n``); ``b`` a base's place counting the mover's own as 0; colours are
absolute (0 Red, 1 Blue, 2 Yellow, 3 Green). Dice showing the same face are
interchangeable, so an action names the face, never the die.

============  =====  ===================================================================
first index   count  meaning
============  =====  ===================================================================
``COLOUR0``   16     colour die ``c`` (``c*4 + s``): take a ``c`` pawn from the Start base
                     (``s = 0``; only while it has one) or from opponent ``k = s``'s
                     waiting area (only when the Start base has no ``c`` pawn)
``WILD0``     16     Wild (``c*4 + s``): take a ``c`` pawn from the Start base (``s = 0``)
                     or from opponent ``k = s``'s waiting area
``SORRY0``    3      Sorry! (``k - 1``): take a pawn from opponent ``k``'s home section
``RECOLOUR0`` 16     Slide (``b*4 + c``): base ``b`` takes colour ``c``, a colour no base
                     has (fewer than four players)
``SWAP0``     6      Slide, all four colours in use: swap the colours of the bases
                     :data:`SWAP_PAIRS` ``[i]``
============  =====  ===================================================================
"""

import numpy as np
from numba import njit

from ..generator import advance, mix

N_COLOURS = 4
PAWNS_PER_COLOUR = 4
RED, BLUE, YELLOW, GREEN, WILD, SLIDE, SORRY = range(7)
N_FACES = 7
# Faces of the two plain dice and of the Sorry! die (the third die has Sorry! instead of Slide).
PLAIN_DIE = np.array([RED, BLUE, YELLOW, GREEN, WILD, SLIDE], dtype=np.int64)
SORRY_DIE = np.array([RED, BLUE, YELLOW, GREEN, SORRY, WILD], dtype=np.int64)
PLAIN_DIE.setflags(write=False)
SORRY_DIE.setflags(write=False)

# ---- state layout -------------------------------------------------------------------------
N_PLAYERS = 0
TO_MOVE = 1
WINNER = 2
TURN = 3
RNG = 4
DICE = 5
BASES = DICE + N_FACES
OWNED = BASES + 4
STATE_SIZE = OWNED + 4 * N_COLOURS

# ---- action layout ------------------------------------------------------------------------
COLOUR0 = 0
WILD0 = COLOUR0 + N_COLOURS * 4
SORRY0 = WILD0 + N_COLOURS * 4
RECOLOUR0 = SORRY0 + 3
SWAP0 = RECOLOUR0 + 4 * N_COLOURS
N_ACTIONS = SWAP0 + 6
SWAP_PAIRS = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]], dtype=np.int64)
SWAP_PAIRS.setflags(write=False)


# ---- random numbers (state-carried, 32-bit) -----------------------------------------------
@njit(cache=True)
def _next32(state):
    """Advance the state's linear congruential generator and return a hashed 32-bit word
    (the hash hides the weak low bits of the raw sequence)."""
    state[RNG] = advance(state[RNG])
    return mix(state[RNG])


@njit(cache=True)
def randint(state, n):
    """Uniform integer in [0, n) from the state's generator (advances it)."""
    return (_next32(state) * n) >> 32


# ---- pawn bookkeeping ---------------------------------------------------------------------
@njit(cache=True)
def start_count(state, colour):
    """Pawns of `colour` still in the Start base (the ones nobody owns)."""
    owned = 0
    for seat in range(state[N_PLAYERS]):
        owned += state[OWNED + seat * N_COLOURS + colour]
    return PAWNS_PER_COLOUR - owned


@njit(cache=True)
def home_count(state, seat):
    """Pawns in `seat`'s home section: the ones it owns of its base's colour."""
    return state[OWNED + seat * N_COLOURS + state[BASES + seat]]


@njit(cache=True)
def waiting_count(state, seat, colour):
    """Pawns of `colour` in `seat`'s waiting area (0 when it is the base's colour)."""
    if state[BASES + seat] == colour:
        return 0
    return state[OWNED + seat * N_COLOURS + colour]


@njit(cache=True)
def colour_in_use(state, colour):
    for seat in range(state[N_PLAYERS]):
        if state[BASES + seat] == colour:
            return True
    return False


# ---- legal actions ------------------------------------------------------------------------
@njit(cache=True)
def legal_mask(state, mask):
    """Set mask[a] = 1 exactly for the legal actions (all zero once the game is over)."""
    mask[:] = 0
    if state[WINNER] >= 0:
        return
    n = state[N_PLAYERS]
    me = state[TO_MOVE]
    _colour_die_moves(state, mask, n, me)
    if state[DICE + SORRY] > 0:
        for k in range(1, n):
            if home_count(state, (me + k) % n) > 0:
                mask[SORRY0 + k - 1] = 1
    if state[DICE + SLIDE] > 0:
        _slide_moves(state, mask, n)


@njit(cache=True)
def _colour_die_moves(state, mask, n, me):
    """legal_mask's colour and wild dice: take a pawn from the Start base or from the
    waiting area of the player k seats on (a colour die takes from a player only when the
    Start base has none of that colour)."""
    wild = state[DICE + WILD] > 0
    for c in range(N_COLOURS):
        in_start = start_count(state, c) > 0
        colour_die = state[DICE + c] > 0
        if in_start:
            if colour_die:
                mask[COLOUR0 + c * 4] = 1
            if wild:
                mask[WILD0 + c * 4] = 1
        for k in range(1, n):
            if waiting_count(state, (me + k) % n, c) > 0:
                if colour_die and not in_start:
                    mask[COLOUR0 + c * 4 + k] = 1
                if wild:
                    mask[WILD0 + c * 4 + k] = 1


@njit(cache=True)
def _slide_moves(state, mask, n):
    """legal_mask's Slide die: recolour a base to a colour nobody plays (fewer than four
    players), or swap the colours of two bases (four players: every colour in use)."""
    if n < N_COLOURS:
        for c in range(N_COLOURS):
            if not colour_in_use(state, c):
                for b in range(n):
                    mask[RECOLOUR0 + b * N_COLOURS + c] = 1
    else:
        mask[SWAP0 : SWAP0 + 6] = 1


@njit(cache=True)
def legal_actions(state, out):
    """Write the legal actions into out (ascending); return how many."""
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    legal_mask(state, mask)
    n = 0
    for a in range(N_ACTIONS):
        if mask[a]:
            out[n] = a
            n += 1
    return n


@njit(cache=True)
def any_playable(state):
    mask = np.zeros(N_ACTIONS, dtype=np.int8)
    legal_mask(state, mask)
    return mask.any()


# ---- turn flow ----------------------------------------------------------------------------
@njit(cache=True)
def roll(state):
    """Roll the three dice of a new turn from the state's generator."""
    state[DICE : DICE + N_FACES] = 0
    for _ in range(2):
        state[DICE + PLAIN_DIE[randint(state, 6)]] += 1
    state[DICE + SORRY_DIE[randint(state, 6)]] += 1


@njit(cache=True)
def pass_turn(state):
    """The turn is over: TURN grows by one and the next seat in turn order is to move (its
    dice not rolled yet)."""
    state[TURN] += 1
    state[TO_MOVE] = (state[TO_MOVE] + 1) % state[N_PLAYERS]


@njit(cache=True)
def end_turn(state):
    """Discard the dice left, pass the turn on and roll, until a roll has a playable die."""
    while True:
        pass_turn(state)
        roll(state)
        if any_playable(state):
            return


@njit(cache=True)
def roll_turn(state):
    """Roll the dice of the turn of the seat to move; a roll with no playable die ends that
    turn at once (:func:`end_turn`)."""
    roll(state)
    if not any_playable(state):
        end_turn(state)


@njit(cache=True)
def pass_turn_rolled(state, faces):
    """Pass the turn on (:func:`pass_turn`) with `faces` (dice counted per face) rolled for
    the next seat; a roll with no playable die is discarded at once, leaving a turn over again
    (no dice left: a chance node). Returns whether the roll was playable."""
    pass_turn(state)
    state[DICE : DICE + N_FACES] = faces
    if any_playable(state):
        return True
    state[DICE : DICE + N_FACES] = 0
    return False


@njit(cache=True)
def init_state(state, n_players, first, seed32):
    """A new game: every pawn in the Start base, seat k's base of colour k, `first` to move
    (-1: drawn from the seed), the first roll made."""
    state[:] = 0
    state[N_PLAYERS] = n_players
    state[RNG] = seed32 & 0xFFFFFFFF
    state[WINNER] = -1
    for seat in range(4):
        state[BASES + seat] = seat if seat < n_players else -1
    state[TO_MOVE] = randint(state, n_players) if first < 0 else first
    roll_turn(state)  # a roll is always playable at the start (the Start base is full)


@njit(cache=True)
def _take(state, me, from_seat, colour):
    """`me` takes a `colour` pawn from `from_seat` (-1: the Start base)."""
    if from_seat >= 0:
        state[OWNED + from_seat * N_COLOURS + colour] -= 1
    state[OWNED + me * N_COLOURS + colour] += 1


@njit(cache=True)
def apply_die(state, action):
    """Resolve one die (a legal action) without checking the win or ending the turn."""
    n = state[N_PLAYERS]
    me = state[TO_MOVE]
    if action < SORRY0:
        face_base = COLOUR0 if action < WILD0 else WILD0
        c, s = divmod(action - face_base, 4)
        _take(state, me, -1 if s == 0 else (me + s) % n, c)
        state[DICE + (c if action < WILD0 else WILD)] -= 1
    elif action < RECOLOUR0:
        victim = (me + action - SORRY0 + 1) % n
        _take(state, me, victim, state[BASES + victim])
        state[DICE + SORRY] -= 1
    elif action < SWAP0:
        b, c = divmod(action - RECOLOUR0, N_COLOURS)
        state[BASES + (me + b) % n] = c
        state[DICE + SLIDE] -= 1
    else:
        one = (me + SWAP_PAIRS[action - SWAP0, 0]) % n
        two = (me + SWAP_PAIRS[action - SWAP0, 1]) % n
        colour = state[BASES + one]
        state[BASES + one] = state[BASES + two]
        state[BASES + two] = colour
        state[DICE + SLIDE] -= 1


@njit(cache=True)
def check_win(state):
    """Set WINNER to the first seat, starting with the mover and going on in turn order,
    whose home section holds all four pawns of its colour; return it (or -1)."""
    n = state[N_PLAYERS]
    for k in range(n):
        seat = (state[TO_MOVE] + k) % n
        if home_count(state, seat) == PAWNS_PER_COLOUR:
            state[WINNER] = seat
            state[DICE : DICE + N_FACES] = 0
            return seat
    return -1


@njit(cache=True)
def end_move(state):
    """After :func:`apply_die`: check the win, and discard the dice left when none is playable
    (the turn is over; the next roll not made yet: a chance node). Returns whether the turn
    (or the game) ended."""
    if check_win(state) >= 0:
        return True
    if any_playable(state):
        return False
    state[DICE : DICE + N_FACES] = 0  # the turn ends: the dice left are discarded
    return True


@njit(cache=True)
def step(state, action):
    """Resolve one die of the player to move (a legal action), check the win, and end the
    turn when no die left is playable (the next seat rolls)."""
    apply_die(state, action)
    if end_move(state) and state[WINNER] < 0:
        end_turn(state)


# ---- observation --------------------------------------------------------------------------
# Player slots: the observer first, then the other seats in turn order. Colours absolute.
OBS_OWNED = 0  # 16: pawns of colour c owned by slot p / 4, at p*4 + c
OBS_BASE = 16  # 16: one-hot base colour of slot p, at 16 + p*4 + c (zero: empty slot)
OBS_HOME = 32  # 4: home-section count of slot p / 4
OBS_START = 36  # 4: pawns of colour c in the Start base / 4
OBS_IN_PLAY = 40  # 4: 1 if slot p is a player
OBS_TO_MOVE = 44  # 4: one-hot slot of the player to move (zero once the game is over)
OBS_DICE = 48  # 7: dice left showing each face / 3
OBS_SIZE = OBS_DICE + N_FACES


@njit(cache=True)
def observe(state, viewer, out):
    """Fill out (float32, OBS_SIZE) with the game seen from seat `viewer`."""
    out[:] = 0.0
    n = state[N_PLAYERS]
    for p in range(n):
        seat = (viewer + p) % n
        for c in range(N_COLOURS):
            out[OBS_OWNED + p * 4 + c] = state[OWNED + seat * N_COLOURS + c] / 4.0
        out[OBS_BASE + p * 4 + state[BASES + seat]] = 1.0
        out[OBS_HOME + p] = home_count(state, seat) / 4.0
        out[OBS_IN_PLAY + p] = 1.0
    for c in range(N_COLOURS):
        out[OBS_START + c] = start_count(state, c) / 4.0
    if state[WINNER] < 0:
        out[OBS_TO_MOVE + (state[TO_MOVE] - viewer) % n] = 1.0
    for f in range(N_FACES):
        out[OBS_DICE + f] = state[DICE + f] / 3.0
