"""The Sorry! rules engine: a game state as one int64 array and pure compiled functions on it.

This module is the only place the rules live. Everything else (the PettingZoo env, agents,
the batched playouts) calls these functions.

Naming: in compiled (numba) code everywhere, a parameter ``rules`` is the int64 rules array
(:meth:`sorry_env.board.rules.Rules.array`, read with the ``R_*`` offsets), never a
:class:`~sorry_env.board.rules.Rules`. Python-level code holds both: there ``rules`` is a Rules or
a preset name and a variable holding the array is called ``rules_array``
(:func:`sorry_env.board.game.rules_array` makes it).

Code outside ``sorry_env`` reads and writes states through the named accessors below
(:func:`winner`, :func:`to_move`, :func:`turns_played`, :func:`card_index`,
:func:`is_running`, :func:`is_active`, :func:`pawn_code`, ...), never through the raw
offsets, and decodes actions with :func:`decode_action`.

State array layout (``STATE_SIZE`` int64 entries)
-------------------------------------------------
===============  =====  ==========================================================
offset           size   content
===============  =====  ==========================================================
``PAWNS``        16     pawn codes (see :mod:`sorry_env.board.geometry`), seat*4 + slot;
                        each seat's pawns kept sorted, most advanced first; unused
                        slots (3-pawn rules, empty seats) hold -1
``ACTIVE``       4      1 if the seat is in the game
``TO_MOVE``      1      seat to play
``CARD``         1      card index to play (:data:`sorry_env.board.rules.CARD_NAMES`), -1: none
                        drawn yet (a chance node)
``DRAW_AGAIN``   1      1 if the card was drawn as the draw-again of a 2
``WINNER``       1      winning seat, -1 while the game runs
``TURN``         1      number of cards played so far
``RNG``          1      32-bit generator state; every shuffle comes from it
``DRAW_POS``     1      index into ``DECK`` of the next card to draw
``REMAIN``       11     count of each card in the draw pile (public knowledge)
``DECK``         55     the pack in draw order; ``DECK[DRAW_POS:pack size]`` is the
                        draw pile, the rest is discards, the card in play and hands
``HANDS``        44     play for points: count of each card in each seat's hand
``SEVEN_LEFT``   1      Hasbro 2003 teams: steps of a seven being split still to move
                        (0: none); the same player keeps the turn until it is 0
``SEVEN_MOVED``  1      bit i set: movable slot i already moved in that seven (slots
                        keep their order, unsorted, until the seven is finished)
``FIRE``         1      Fire and Ice: 0 Fire in the middle, else 1 + the pawn's index
                        ``seat*4 + slot`` (kept on the same pawn when slots re-sort)
``ICE``          1      0 Ice in the middle, else 1 + the track square of the iced pawn
                        (an iced pawn never moves, so its square names it)
``FIRE_PENDING`` 1      1: the player to move first decides on a fire move (no card
                        drawn yet; a decision node, not a chance node)
===============  =====  ==========================================================

Randomness lives in the state (``RNG``), so a state plus an action fully determines the
next state: no global random state anywhere.

Actions
-------
One fixed, player-relative action space per rules configuration (:func:`action_offsets`),
with ``C`` colours the player moves (1; 2 under team rules: own, then partner's), ``P = C*n``
movable pawn slots (the acting seat's ``n`` pawns in canonical order, most advanced first,
then the partner's) and ``T`` target slots (without teams: the other seats in turn order,
``t = (k-1)*n + slot`` for the k-th, T = 3n; with teams: every seat in turn order counting
the acting seat as k = 0, ``t = k*n + slot``, T = 4n):

====================  ======================  =========================================
first index           count                   meaning
====================  ======================  =========================================
0                     1                       PASS (forfeit; on an 11, decline to swap)
``1 + c``             C                       START a pawn of colour c
``F = 1+C``           P                       pawn i moves the card's own distance
                                              (forward N; the 4 backward; Sorry! +4 when
                                              the rules allow it)
``B = F+P``           P                       pawn i moves back one (10)
``S = B+P``           6P(P-1)                 split 7: pawn i moves a (1..6) first, then
                                              pawn j moves 7-a; Hasbro 2003 teams: 6P,
                                              pawn i moves a as one part of the seven
``W = S + split``     P*T                     11: swap pawn i with target t
``Y = W + PT``        C*T                     Sorry!: a pawn from colour c's Start onto
                                              target t
====================  ======================  =========================================

Split index: ``S + (i*(P-1) + j')*6 + (a-1)`` with ``j' = j - (j > i)`` (Hasbro 2003 teams:
``S + i*6 + (a-1)``). Swap index: ``W + i*T + t``. Sorry! index: ``Y + c*T + t``.

Fire and Ice (``R_FIRE_ICE``): with ``N0`` the card actions above, index ``k*N0 + a``
(k = 0..T) plays card action ``a`` after a token choice k: on a 1, k = 1 + t puts Ice on
target t (k = 0: no opponent pawn on the track, Ice to the middle); on a 2, k = 1 + i puts
Fire on own pawn slot i (k = 0: Fire stays where it is); other cards use k = 0. Then
``(T+1)*N0`` declines and ``(T+1)*N0 + 1`` makes the fire move at a fire decision
(:func:`action_token` decodes k).
"""

import numpy as np
from numba import config as numba_config
from numba import njit
from numba.core.registry import CPUDispatcher

from ..generator import advance, mix
from .geometry import (
    BACKWARD,
    FORWARD,
    HOME,
    N_SEATS,
    SAFETY_ENTRY,
    SLIDE_END,
    SLIDE_OWNER,
    START,
    START_CIRCLE,
    STEPS_TO_HOME,
    TRACK,
)
from .rules import (
    C1,
    C2,
    C7,
    C10,
    C11,
    CSORRY,
    MAX_PACK,
    N_CARDS,
    R_FAST_PLAY,
    R_FIRE_ICE,
    R_HAND_SIZE,
    R_PACK,
    R_PACK_SIZE,
    R_PAWNS,
    R_SORRY_FORWARD,
    R_START_CARDS,
    R_TEAMS,
    R_TWO_DRAWS_AGAIN,
    TEAMS_HASBRO2003,
    TEAMS_PARKER1958,
)

# ---- state layout -------------------------------------------------------------------------
PAWNS = 0
ACTIVE = 16
TO_MOVE = 20
CARD = 21
DRAW_AGAIN = 22
WINNER = 23
TURN = 24
RNG = 25
DRAW_POS = 26
REMAIN = 27
DECK = REMAIN + N_CARDS
HANDS = DECK + MAX_PACK  # play-for-points: seat*11 + card -> copies of that card in hand
SEVEN_LEFT = HANDS + 4 * N_CARDS  # Hasbro 2003 teams: steps of a split seven still to move
SEVEN_MOVED = SEVEN_LEFT + 1  # ... and the movable slots that already moved (bit mask)
FIRE = SEVEN_MOVED + 1  # Fire and Ice: 0 middle, else 1 + seat*4 + slot of the fire pawn
ICE = FIRE + 1  # 0 middle, else 1 + track square of the iced pawn
FIRE_PENDING = ICE + 1  # 1: the player to move decides on a fire move before the draw
STATE_SIZE = FIRE_PENDING + 1

MAX_SLOTS = 4
# Distance a single-pawn move of each card covers (negative: backward); 0: no such move.
CARD_STEP = np.array([1, 2, 3, -4, 5, 7, 8, 10, 11, 12, 0], dtype=np.int64)
CARD_STEP.setflags(write=False)

# ---- COMPILE COST ------------------------------------------------------------------------
# Every function below is compiled by numba on first use into its disk cache; a first command
# on an empty cache spends most of its time here (docs/speed.md, "Compiling"). What keeps it
# down, measured there:
# - numba compiles one copy of a function per literal argument type: a constant argument, or
#   a counter that starts at a literal 0 and is passed on, adds a copy. Such values are
#   passed as np.int64(...), which is one type for every value.
# - each compiled function's machine code holds its own re-optimized copy of everything it
#   calls, so code size counts once per caller: a small loop that LLVM would unroll and
#   vectorize into hundreds of instructions is written as one flat loop (_send_to_start_at,
#   _lay_out), and a slice copy ``a[:] = b``, which compiles numba's shape-mismatch error
#   with its string formatting, is a loop (copy_state).
# - for the same reason every compiled function is a module of its own that re-optimizes all
#   it calls: a thin wrapper over large callees (play, _apply_move) or a helper with a single
#   caller (_card_actions) is ``inline="always"``, compiled inside its caller only. Not a
#   body that would be inlined into two callers: that compiles it twice.
# - a game under plain rules (are_plain: no Fire and Ice, no hands, no Hasbro 2003 split-seven
#   parts) needs about a quarter less code. The entry points Python calls for a game
#   (init_state, legal_actions, step, redeal_hidden; scripted_choices.heuristic_choice) take
#   a last argument ``extras``: left out (True), their code handles any rules; None (only
#   for plain rules) leaves the other rules' code out. Numba decides ``extras is None``
#   from the argument's type before compiling, so the branches under ``extras is not None``
#   are not compiled at all (a compiled version of its own, for extras=None). Python passes
#   it as ``*sorry_env.board.game.extras_args(rules)``; compiled callers leave it out. A
#   function not inlined is given it explicitly (a variable or True), never left out: a
#   left-out default and a passed True are two types, two compiled copies.
# - numba builds two wrappers for every compiled function, one for calls from Python and one
#   for C callers (a first-class function value); ``compiled`` leaves the second out. A
#   private helper called from compiled code only (``compiled(from_python=False)``) has
#   neither (the two wrappers were a quarter of the code compiled: docs/speed.md). Called
#   from Python such a function raises TypeError (numba's no_cpython_wrapper alone crashes).


class _CompiledOnly(CPUDispatcher):
    """A compiled function without numba's wrapper for calls from Python (COMPILE COST)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} runs inside compiled code only, not from Python")


def compiled(function=None, *, inline="never", from_python=True):
    """``numba.njit(cache=True)`` for the board game's compiled code, without numba's
    C-callable wrapper, and with ``from_python=False`` without its Python one (COMPILE
    COST). ``@compiled``, ``@compiled(inline="always")`` or ``@compiled(from_python=False)``."""
    if from_python or numba_config.DISABLE_JIT:
        decorate = njit(cache=True, inline=inline, no_cfunc_wrapper=True)
        return decorate if function is None else decorate(function)

    def decorate_inside_only(python_function):
        options = {"nopython": True, "inline": inline, "no_cfunc_wrapper": True, "no_cpython_wrapper": True}
        dispatcher = _CompiledOnly(py_func=python_function, locals={}, targetoptions=options)
        dispatcher.enable_caching()
        return dispatcher

    return decorate_inside_only if function is None else decorate_inside_only(function)


# ---- named access to the state (for code outside this package) ------------------------------
# Compiled, so numba code and Python both use them; the raw offsets above stay inside sorry_env.
@compiled
def winner(state):
    """Seat that made the winning move (team rules: either partner), -1 while the game runs."""
    return state[WINNER]


@compiled
def to_move(state):
    """Seat to play."""
    return state[TO_MOVE]


@compiled
def set_to_move(state, seat):
    """Make `seat` the player to move (a tournament choosing its first player)."""
    state[TO_MOVE] = seat


@compiled
def turns_played(state):
    """Number of cards played so far."""
    return state[TURN]


@compiled
def card_index(state):
    """Index of the card in play (:data:`sorry_env.board.rules.CARD_NAMES`), -1 if none drawn."""
    return state[CARD]


@compiled
def is_running(state, max_turns):
    """True while nobody has won and fewer than `max_turns` cards have been played."""
    return state[WINNER] < 0 and state[TURN] < max_turns


@compiled
def is_active(state, seat):
    """True if `seat` is in the game."""
    return state[ACTIVE + seat] != 0


@compiled
def pawn_code(state, seat, slot):
    """Pawn code (:mod:`sorry_env.board.geometry`) of `seat`'s pawn in `slot` (canonical order, most
    advanced first; -1 for a slot the rules do not use)."""
    return state[PAWNS + seat * MAX_SLOTS + slot]


@compiled
def pile_count(state, card):
    """Copies of `card` in the draw pile (public knowledge)."""
    return state[REMAIN + card]


@compiled
def hand_count(state, seat, card):
    """Play for points: copies of `card` in `seat`'s hand."""
    return state[HANDS + seat * N_CARDS + card]


@compiled
def fire_decision_pending(state):
    """True if the player to move first decides on a fire move (Fire and Ice; no card yet)."""
    return state[FIRE_PENDING] != 0


@compiled
def fire_pawn(state):
    """(seat, slot) of the pawn holding Fire, (-1, -1) while Fire is in the middle."""
    if state[FIRE] == 0:
        return -1, -1
    return (state[FIRE] - 1) // MAX_SLOTS, (state[FIRE] - 1) % MAX_SLOTS


@compiled
def ice_pawn(state):
    """(seat, slot) of the iced pawn, (-1, -1) while Ice is in the middle."""
    square = state[ICE] - 1
    if square < 0:
        return -1, -1
    for k in range(16):
        if state[ACTIVE + k // MAX_SLOTS] and state[PAWNS + k] == square:
            return k // MAX_SLOTS, k % MAX_SLOTS
    return -1, -1


@compiled
def seed_generator(state, seed):
    """Set the state's random generator (every later shuffle comes from it) from `seed`."""
    state[RNG] = seed & 0xFFFFFFFF


# ---- action layout ------------------------------------------------------------------------
# Kinds of action, as decode_action returns them (ACTION_KINDS: their names in sorry_env.board.game).
ACT_PASS, ACT_START, ACT_MOVE, ACT_BACK1, ACT_SPLIT, ACT_SEVEN_PART, ACT_SWAP, ACT_SORRY, ACT_DISCARD = range(9)
ACT_FIRE_DECLINE, ACT_FIRE_MOVE = 9, 10  # Fire and Ice: the decision before the draw
ACTION_KINDS = (
    "pass",
    "start",
    "move",
    "back1",
    "split",
    "seven_part",
    "swap",
    "sorry",
    "discard",
    "no_fire_move",
    "fire_move",
)


@compiled
def action_offsets(rules):
    """(P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N): movable pawn slots, target
    slots, the first index of each action group, and the action count."""
    ppp = rules[R_PAWNS]
    colours = 2 if rules[R_TEAMS] else 1  # team rules: own and partner's pawns
    P = colours * ppp
    T = (4 if rules[R_TEAMS] else 3) * ppp
    start0 = 1
    fwd0 = start0 + colours
    back0 = fwd0 + P
    split0 = back0 + P
    # A seven splits between two pawns (an ordered pair and the first distance), or under
    # the Hasbro 2003 team rules among any of the eight pawns, one part at a time (pawn i
    # moves a = 1..6 as part of the seven).
    swap0 = split0 + (P * 6 if rules[R_TEAMS] == TEAMS_HASBRO2003 else P * (P - 1) * 6)
    sorry0 = swap0 + P * T
    return P, T, start0, fwd0, back0, split0, swap0, sorry0, sorry0 + colours * T


@compiled
def num_actions(rules):
    """Size of the action space: the card actions above, or with hands (play for points)
    one block of them per card kind (``card * n_card_actions + action``) followed by
    N_CARDS discard actions (``N_CARDS * n_card_actions + card``)."""
    offsets = action_offsets(rules)
    n_card = offsets[8]
    if rules[R_HAND_SIZE]:
        return N_CARDS * n_card + N_CARDS
    if rules[R_FIRE_ICE]:
        return (offsets[1] + 1) * n_card + 2
    return n_card


def n_actions(rules):
    return int(num_actions(rules))


def are_plain(rules):
    """True for rules without Fire and Ice, hands (play for points) or the Hasbro 2003 team
    rules' split-seven parts: those the compiled entry points may be given ``extras=None``
    for (see COMPILE COST)."""
    return rules[R_FIRE_ICE] == 0 and rules[R_HAND_SIZE] == 0 and rules[R_TEAMS] != TEAMS_HASBRO2003


@compiled
def action_buffer(rules):
    """Scratch space for :func:`legal_actions` under these rules: ``num_actions`` entries, as
    with hands the legal actions of every card held are listed together (one card's block
    is not enough)."""
    return np.empty(num_actions(rules), dtype=np.int64)


# ---- random numbers (state-carried, 32-bit) -----------------------------------------------
@compiled(from_python=False)
def _rand32(state):
    state[RNG] = advance(state[RNG])
    return mix(state[RNG])


@compiled
def randint(state, n):
    """Uniform integer in [0, n) from the state's generator (advances it)."""
    return (_rand32(state) * n) >> 32


# ---- pawns --------------------------------------------------------------------------------
@compiled
def sort_seat(state, seat, ppp):
    """Keep a seat's pawns in canonical order: fewest steps to Home first."""
    base = PAWNS + seat * MAX_SLOTS
    for i in range(1, ppp):
        code = state[base + i]
        key = STEPS_TO_HOME[seat, code]
        k = i - 1
        while k >= 0 and STEPS_TO_HOME[seat, state[base + k]] > key:
            state[base + k + 1] = state[base + k]
            k -= 1
        state[base + k + 1] = code


@compiled(from_python=False)
def _own_slot_at(state, seat, ppp, code):
    """Slot of the seat's pawn on `code` (track or safe), or -1."""
    base = PAWNS + seat * MAX_SLOTS
    for i in range(ppp):
        if state[base + i] == code:
            return i
    return -1


@compiled(from_python=False)
def _start_slot(state, seat, ppp):
    base = PAWNS + seat * MAX_SLOTS
    for i in range(ppp - 1, -1, -1):
        if state[base + i] == START:
            return i
    return -1


# ---- move events: what a move did, pawn by pawn ---------------------------------------
# apply_move_events records them (sorry_env.board.narrate tells them); every other caller passes
# events=None, and numba compiles the recording away for None.
EVENT_SIZE = 5  # kind, seat, slot (the pawn's slot BEFORE the move), a, b
EV_PLACE = 0  # a pawn's own movement (or a swap's exchange): a = code before, b = code after (before any slide)
EV_BUMP = 1  # a pawn sent to Start by the landing just placed: a = its square
EV_SLIDE = 2  # a pawn slid: a = the triangle, b = where it stopped
EV_SWEEP = 3  # a pawn sent to Start by the slide just made: a = its square
MAX_EVENTS = 32  # the most a move records is a split seven's: 2 x (place, bump, slide, 4 sweeps)


def event_buffer():
    """A buffer for apply_move_events: [count, then EVENT_SIZE numbers per event]."""
    return np.zeros(1 + EVENT_SIZE * MAX_EVENTS, dtype=np.int64)


@compiled
def _record_event(events, kind, seat, slot, a, b):
    n = events[0]
    if 1 + EVENT_SIZE * (n + 1) > events.shape[0]:
        raise ValueError("move events: the buffer is too small (use engine.event_buffer())")
    at = 1 + EVENT_SIZE * n
    events[at] = kind
    events[at + 1] = seat
    events[at + 2] = slot
    events[at + 3] = a
    events[at + 4] = b
    events[0] = n + 1


@compiled(from_python=False)
def _send_to_start_at(state, square, keep_seat, keep_slot, events, kind):
    """Every pawn on track `square` except (keep_seat, keep_slot) goes back to its Start
    (recorded as `kind`, EV_BUMP or EV_SWEEP). One loop over all 16 slots: the slots of empty
    seats and unused slots hold -1, never a square."""
    keep = keep_seat * MAX_SLOTS + keep_slot
    for k in range(N_SEATS * MAX_SLOTS):
        if state[PAWNS + k] == square and k != keep:
            state[PAWNS + k] = START
            if events is not None:
                _record_event(events, kind, k // MAX_SLOTS, k % MAX_SLOTS, square, START)


@compiled(from_python=False)
def _slide_if_foreign_triangle(state, seat, slot, events):
    """A pawn ending a move on another colour's slide triangle slides to the end, sending
    every pawn on the slide's other squares (own pawns included) back to Start."""
    square = state[PAWNS + seat * MAX_SLOTS + slot]
    if square >= TRACK or SLIDE_OWNER[square] == -1 or SLIDE_OWNER[square] == seat:
        return
    last = SLIDE_END[square]
    iced = state[ICE] - 1  # an iced pawn is not swept; the slide stops short of it
    end = (last + TRACK - 1) % TRACK if last == iced else last
    if events is not None:
        _record_event(events, EV_SLIDE, seat, slot, square, end)
    sq = square
    while sq != last:
        sq = (sq + 1) % TRACK
        if sq != iced:
            _send_to_start_at(state, sq, seat, slot, events, np.int64(EV_SWEEP))  # np.int64: see COMPILE COST
    state[PAWNS + seat * MAX_SLOTS + slot] = end


@compiled(from_python=False)
def _land(state, seat, slot, dest, events):
    """Put a pawn on `dest`: bump whoever is there, then slide if on a foreign triangle."""
    if events is not None:
        _record_event(events, EV_PLACE, seat, slot, state[PAWNS + seat * MAX_SLOTS + slot], dest)
    state[PAWNS + seat * MAX_SLOTS + slot] = dest
    if dest < TRACK:
        _send_to_start_at(state, dest, seat, slot, events, np.int64(EV_BUMP))
        _slide_if_foreign_triangle(state, seat, slot, events)


@compiled
def other_seat(state, me, k):
    """The k-th other active seat after `me` in turn order (k = 1..3), or -1."""
    count = 0
    for offset in range(1, 4):
        seat = (me + offset) % 4
        if state[ACTIVE + seat]:
            count += 1
            if count == k:
                return seat
    return -1


@compiled
def target_pawn(state, rules, me, t):
    """(seat, slot) of target slot t: the k-th seat in turn order, k = t // ppp (team
    rules: k = 0 is the acting seat itself; otherwise k counts the other seats from 1).
    (-1, -1) if there is no such seat."""
    ppp = rules[R_PAWNS]
    if rules[R_TEAMS]:
        return (me + t // ppp) % 4, t % ppp
    seat = other_seat(state, me, t // ppp + 1)
    if seat < 0:
        return -1, -1
    return seat, t % ppp


@compiled
def movable_pawn(rules, me, i):
    """(seat, slot) of movable pawn slot i: the acting seat's pawns, then (team rules) the
    partner's."""
    ppp = rules[R_PAWNS]
    if i < ppp:
        return me, i
    return (me + 2) % 4, i - ppp


@compiled
def same_side(rules, seat, other):
    """True if `seat` and `other` play on one side: the same seat, or partners under team
    rules (seats 0+2 against 1+3). A side shares a win: the winner recorded is the seat that
    made the winning move."""
    return seat == other or (rules[R_TEAMS] != 0 and (other - seat) % 2 == 0)


@compiled
def num_sides(rules, state):
    """Number of sides among the active seats (2 for two players or two teams)."""
    count = 0
    for s in range(4):
        if not is_active(state, s):
            continue
        new = True
        for t in range(s):
            if is_active(state, t) and same_side(rules, s, t):
                new = False
        if new:
            count += 1
    return count


# ---- move checks --------------------------------------------------------------------------
@compiled(from_python=False)
def _step_dest(seat, code, step):
    if step > 0:
        return FORWARD[seat, code, step]
    return BACKWARD[seat, code, -step]


ILLEGAL = 0
LEGAL = 1
ON_PARTNER = 2  # legal, but ends on a partner's pawn (team rules)


@compiled(from_python=False)
def _landing_check(state, rules, seat, dest):
    """Can a pawn of `seat` end a move on `dest`? Never on a pawn of its own colour."""
    ppp = rules[R_PAWNS]
    if dest == HOME:
        return LEGAL
    if _own_slot_at(state, seat, ppp, dest) >= 0 or dest == state[ICE] - 1:
        return ILLEGAL  # own pawn there, or the iced pawn (it cannot be bumped)
    if rules[R_TEAMS] and dest < TRACK and _own_slot_at(state, (seat + 2) % 4, ppp, dest) >= 0:
        return ON_PARTNER
    return LEGAL


@compiled(from_python=False)
def _move_check(state, rules, seat, slot, step):
    code = state[PAWNS + seat * MAX_SLOTS + slot]
    if code >= HOME or code == state[ICE] - 1:
        return ILLEGAL  # in Home or Start, or iced
    dest = _step_dest(seat, code, step)
    if dest < 0:
        return ILLEGAL
    return _landing_check(state, rules, seat, dest)


@compiled
def copy_state(source, target):
    """`target` := `source` (two state arrays), for compiled code: a loop, as the slice
    assignment ``target[:] = source`` compiles numba's shape-mismatch error path with its
    string formatting, a second or two of compile for nothing (see COMPILE COST)."""
    for k in range(STATE_SIZE):
        target[k] = source[k]


@compiled(inline="always")
def _split_check(state, rules, me, i, j, a, scratch):
    """The ordered split: pawn i moves a forward and resolves fully (bumps, slides), then
    pawn j moves 7 - a from wherever it then stands."""
    si, ki = movable_pawn(rules, me, i)
    sj, kj = movable_pawn(rules, me, j)
    first = _move_check(state, rules, si, ki, a)
    if first == ILLEGAL:
        return ILLEGAL
    d1 = FORWARD[si, state[PAWNS + si * MAX_SLOTS + ki], a]
    if rules[R_TEAMS] == 0 and (d1 >= TRACK or SLIDE_OWNER[d1] == -1 or SLIDE_OWNER[d1] == si):
        # Fast path: without a slide or partners, the first half only moves pawn i (its bump
        # hits an opponent), so the second half is judged against i's new square.
        d2 = FORWARD[sj, state[PAWNS + sj * MAX_SLOTS + kj], 7 - a]
        if d2 < 0 or state[PAWNS + sj * MAX_SLOTS + kj] == state[ICE] - 1 or d2 == state[ICE] - 1:
            return ILLEGAL
        if d2 == HOME:
            return LEGAL
        if d2 == d1:
            return ILLEGAL
        other = _own_slot_at(state, sj, rules[R_PAWNS], d2)
        return LEGAL if other < 0 or other == ki else ILLEGAL
    copy_state(state, scratch)
    _land(scratch, si, ki, FORWARD[si, state[PAWNS + si * MAX_SLOTS + ki], a], None)
    second = _move_check(scratch, rules, sj, kj, 7 - a)
    if second == ILLEGAL:
        return ILLEGAL
    return ON_PARTNER if (first == ON_PARTNER or second == ON_PARTNER) else LEGAL


# ---- legal moves --------------------------------------------------------------------------
@compiled
def legal_actions(state, rules, out, extras=True):
    """Write the legal action indices into `out` (length num_actions); return their count.
    Without hands: the moves of the state's card, or the single action PASS (Fire and Ice:
    each after its token choices, see the module docstring). With hands: every move of
    every card held that moves a pawn (or declines an 11 swap); if no card can move,
    discarding any card held. `extras`: see COMPILE COST."""
    if extras is None:
        return _card_actions(state, rules, out, extras)  # no hands, no tokens: the card's moves
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, n_card = action_offsets(rules)
    hands = rules[R_HAND_SIZE] != 0
    tokens = rules[R_FIRE_ICE] != 0 and not hands  # Fire and Ice
    if tokens and state[FIRE_PENDING]:
        out[0] = (T + 1) * n_card  # no fire move
        out[1] = (T + 1) * n_card + 1  # the fire move
        return 2
    card = state[CARD]
    saved_ice = state[ICE]
    ice = tokens and card == C1
    # The card moves are listed once per variant of the position, each block at its own
    # offset: with hands once per card held; on a Fire and Ice 1 once per opponent pawn on the
    # track that Ice may go on (the moves judged with Ice there), or if there is none once
    # with Ice in the middle; else once. One call site of _card_actions: each call site is
    # compiled code of its own (see COMPILE COST).
    n = 0
    for v in range(N_CARDS if hands else (T + 1 if ice else 1)):
        base = _enter_variant(state, rules, v, hands, ice, n, n_card)
        if base == -2:
            break
        if base < 0:
            continue
        m = _card_actions(state, rules, out[n:], extras)  # listed after those before, then offset to its block
        if hands and m == 1 and out[n] == 0:
            continue  # this card cannot move a pawn
        for x in range(n, n + m):
            out[x] += base
        n += m
    state[ICE] = saved_ice
    if hands:
        state[CARD] = -1
        if n == 0:
            n = _discard_actions(state, out, n_card)
    if tokens and card == C2:
        n = _fire_choices(state, out, n, P, n_card)
    return n


@compiled(inline="always")
def _enter_variant(state, rules, v, hands, ice, n, n_card):
    """Set up variant `v` of legal_actions' listing (`n` actions listed so far): with hands
    card v becomes the card in play; on a Fire and Ice 1, Ice goes onto target slot v (v = T:
    to the middle). Returns the offset of the variant's block, -1 to skip it (no such card,
    no opponent pawn on the track there) or -2 to stop (Ice went onto a pawn before)."""
    if hands:
        if state[HANDS + state[TO_MOVE] * N_CARDS + v] == 0:
            return -1
        state[CARD] = v
        return v * n_card
    if not ice:
        return 0
    if v == action_offsets(rules)[1]:
        if n > 0:
            return -2
        state[ICE] = 0
        return 0
    seat, slot = target_pawn(state, rules, state[TO_MOVE], v)
    if seat < 0 or same_side(rules, state[TO_MOVE], seat) or state[PAWNS + seat * MAX_SLOTS + slot] >= TRACK:
        return -1
    state[ICE] = state[PAWNS + seat * MAX_SLOTS + slot] + 1
    return (1 + v) * n_card


@compiled(inline="always")
def _discard_actions(state, out, n_card):
    """With hands, when no card held can move a pawn: discarding any card held."""
    me = state[TO_MOVE]
    n = 0
    for c in range(N_CARDS):
        if state[HANDS + me * N_CARDS + c] > 0:
            out[n] = N_CARDS * n_card + c
            n += 1
    return n


@compiled(inline="always")
def _fire_choices(state, out, n, P, n_card):
    """Fire and Ice, a 2: the `n` card moves listed (Fire stays, k = 0) again after each
    choice of moving Fire onto an own pawn in play (k = 1 + i); where Fire is does not change
    what the card may do."""
    me = state[TO_MOVE]
    m = n
    for k in range(1, P + 1):
        code = state[PAWNS + me * MAX_SLOTS + k - 1]
        if code >= HOME or state[FIRE] == me * MAX_SLOTS + k:  # not in play, or Fire is there
            continue
        for x in range(m):
            out[n] = k * n_card + out[x]
            n += 1
    return n


@compiled(from_python=False)
def _record(check, action, out, n, partner_moves, n_partner):
    """File a checked action: legal ones in `out`, ones ending on a partner's pawn apart
    (team rules decide later whether they count); returns the two new counts."""
    if check == LEGAL:
        out[n] = action
        return n + 1, n_partner
    if check == ON_PARTNER:
        partner_moves[n_partner] = action
        return n, n_partner + 1
    return n, n_partner


@compiled(inline="always")
def _card_actions(state, rules, out, extras):
    """The legal actions of the state's card (CARD); PASS alone if none. Listed in a fixed
    order (starts, the card's own moves, then its special moves, then moves onto a partner),
    which random playouts and first-best agents depend on."""
    if extras is not None and state[SEVEN_LEFT] > 0:
        return _seven_parts(state, rules, out, np.int64(0))  # a split seven is under way
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    me = state[TO_MOVE]
    card = state[CARD]
    n = np.int64(0)  # np.int64: see COMPILE COST
    # Legal moves that end on a partner's pawn (only possible under team rules): filed apart,
    # the rules decide below whether they count.
    partner_moves = np.empty(N if rules[R_TEAMS] else 1, dtype=np.int64)
    n_partner = np.int64(0)
    if (rules[R_START_CARDS] >> card) & 1:
        n, n_partner = _start_actions(state, rules, out, partner_moves)
    step = CARD_STEP[card] if card != CSORRY else rules[R_SORRY_FORWARD]
    n_partner_before = n_partner
    for i in range(P if step != 0 else 0):
        seat, slot = movable_pawn(rules, me, i)
        check = _move_check(state, rules, seat, slot, step)
        n, n_partner = _record(check, FWD0 + i, out, n, partner_moves, n_partner)
    n_partner_forward = n_partner - n_partner_before
    if card == C10:
        for i in range(P):
            seat, slot = movable_pawn(rules, me, i)
            check = _move_check(state, rules, seat, slot, np.int64(-1))
            n, n_partner = _record(check, BACK0 + i, out, n, partner_moves, n_partner)
    elif extras is not None and card == C7 and rules[R_TEAMS] == TEAMS_HASBRO2003:
        n = _seven_parts(state, rules, out, n)
    elif card == C7:
        n, n_partner = _split_actions(state, rules, out, n, partner_moves, n_partner)
    elif card == C11:
        n = _swap_actions(state, rules, out, n, n_partner_forward)
    elif card == CSORRY:
        n = _sorry_actions(state, rules, out, n)
    # Team rules: ending on a partner's pawn bumps it. Parker 1958 allows that only when no
    # other move exists; Hasbro 2003 always.
    if n_partner > 0 and (n == 0 or rules[R_TEAMS] != TEAMS_PARKER1958):
        for k in range(n_partner):
            out[n] = partner_moves[k]
            n += 1
    if n == 0:
        out[0] = 0
        n = 1
    return n


@compiled(from_python=False)
def _start_actions(state, rules, out, partner_moves):
    """The START actions (a card that starts pawns), the first in `out`; returns the counts
    (n, n_partner)."""
    ppp = rules[R_PAWNS]
    me = state[TO_MOVE]
    n = np.int64(0)  # np.int64: see COMPILE COST
    n_partner = np.int64(0)
    for c in range(2 if rules[R_TEAMS] else 1):
        seat = (me + 2 * c) % 4
        if _start_slot(state, seat, ppp) >= 0:
            check = _landing_check(state, rules, seat, START_CIRCLE[seat])
            n, n_partner = _record(check, 1 + c, out, n, partner_moves, n_partner)
    return n, n_partner


@compiled(inline="always")
def _split_actions(state, rules, out, n, partner_moves, n_partner):
    """A seven split between two pawns: pawn i moves a (1..6), then pawn j moves 7 - a."""
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    me = state[TO_MOVE]
    scratch = np.empty(STATE_SIZE, dtype=np.int64)
    for i in range(P):
        si, ki = movable_pawn(rules, me, i)
        if state[PAWNS + si * MAX_SLOTS + ki] >= HOME:
            continue
        for j in range(P):
            sj, kj = movable_pawn(rules, me, j)
            if j == i or state[PAWNS + sj * MAX_SLOTS + kj] >= HOME:
                continue
            jj = j - 1 if j > i else j
            for a in range(1, 7):
                check = _split_check(state, rules, me, i, j, a, scratch)
                action = SPLIT0 + (i * (P - 1) + jj) * 6 + a - 1
                n, n_partner = _record(check, action, out, n, partner_moves, n_partner)
    return n, n_partner


@compiled(from_python=False)
def _swap_actions(state, rules, out, n, n_partner_forward):
    """The 11's swaps of a movable pawn on the track with an opponent's, then PASS (declining
    to swap) where the rules allow it; `n_partner_forward`: +11 moves onto a partner."""
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    me = state[TO_MOVE]
    iced = state[ICE] - 1  # an iced pawn is swapped neither way
    n_swaps = 0
    for i in range(P):
        si, ki = movable_pawn(rules, me, i)
        if state[PAWNS + si * MAX_SLOTS + ki] >= TRACK or state[PAWNS + si * MAX_SLOTS + ki] == iced:
            continue
        for t in range(T):
            seat, slot = target_pawn(state, rules, me, t)
            if seat < 0 or same_side(rules, me, seat):
                continue  # swaps are with opponents only
            if state[PAWNS + seat * MAX_SLOTS + slot] < TRACK and state[PAWNS + seat * MAX_SLOTS + slot] != iced:
                out[n] = SWAP0 + i * T + t
                n += 1
                n_swaps += 1
    # No +11 move (nor a start, where an 11 starts pawns; a move ending on a partner
    # counts only where such moves are free, 2003): the player may decline to swap.
    if n == n_swaps and n_swaps > 0 and (n_partner_forward == 0 or rules[R_TEAMS] == TEAMS_PARKER1958):
        out[n] = 0
        n += 1
    return n


@compiled(from_python=False)
def _sorry_actions(state, rules, out, n):
    """The Sorry! card's swaps from Start, opponents first. Team rules: a Sorry! must be
    used, so with no opponent to pick on it sends back a pawn of the other team colour (a
    partner's or, from the partner's Start, one's own)."""
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    ppp = rules[R_PAWNS]
    me = state[TO_MOVE]
    n_sorry = n
    for on_team in range(2 if rules[R_TEAMS] else 1):
        if n > n_sorry:
            break
        for c in range(P // ppp):
            mover = (me + 2 * c) % 4
            if _start_slot(state, mover, ppp) < 0:
                continue
            for t in range(T):
                seat, slot = target_pawn(state, rules, me, t)
                if seat < 0 or seat == mover or same_side(rules, mover, seat) != (on_team == 1):
                    continue
                code = state[PAWNS + seat * MAX_SLOTS + slot]
                if code < TRACK and code != state[ICE] - 1:  # an iced pawn cannot be taken
                    out[n] = SORRY0 + c * T + t
                    n += 1
    return n


@compiled
def fire_move_target(state, rules, seat):
    """Fire and Ice: the square a fire move of `seat`'s fire pawn ends its forward move on
    (the triangle of the next slide ahead that is not the pawn's colour), or -1 if `seat`
    has no fire move: Fire not on its pawn, the pawn iced, off the track (safety zone, Start,
    Home), its own safety entry before that triangle, or the triangle holding an own pawn
    or the iced pawn (a move may never end there)."""
    if state[FIRE] == 0 or (state[FIRE] - 1) // MAX_SLOTS != seat:
        return -1
    code = state[PAWNS + state[FIRE] - 1]
    if code >= TRACK or code == state[ICE] - 1:
        return -1
    to_entry = (SAFETY_ENTRY[seat] - code + TRACK) % TRACK
    for d in range(1, to_entry + 1):
        sq = (code + d) % TRACK
        if SLIDE_OWNER[sq] != -1 and SLIDE_OWNER[sq] != seat:
            if _landing_check(state, rules, seat, sq) == ILLEGAL:
                return -1
            return sq
    return -1


@compiled
def action_token(rules, action):
    """Fire and Ice: the token choice k of an action (``k*N0 + a``, see the module
    docstring); 0 for a fire decision and without Fire and Ice."""
    if rules[R_FIRE_ICE] == 0:
        return 0
    offsets = action_offsets(rules)
    n0 = offsets[8]
    if action >= (offsets[1] + 1) * n0:
        return 0
    return action // n0


@compiled
def _seven_part_ok(state, rules, me, i, a, left, moved):
    """Hasbro 2003 teams: may movable slot i move `a` steps as one part of a split seven
    with `left` steps still to move? It must not have moved in this seven yet, and some
    order of further parts must then use up the rest (searched depth first; plain
    self-recursion, which numba can cache)."""
    seat, slot = movable_pawn(rules, me, i)
    code = state[PAWNS + seat * MAX_SLOTS + slot]
    if (moved >> i) & 1 or code >= HOME or _move_check(state, rules, seat, slot, a) == ILLEGAL:
        return False
    if a == left:
        return True
    child = state.copy()
    _land(child, seat, slot, FORWARD[seat, code, a], None)
    for j in range(action_offsets(rules)[0]):
        for b in range(1, left - a + 1):
            if _seven_part_ok(child, rules, me, j, b, left - a, moved | (1 << i)):
                return True
    return False


@compiled
def _seven_parts(state, rules, out, n):
    """Hasbro 2003 teams: the legal parts (pawn i moves a) of a seven split among any of
    the team's pawns, the seven just drawn or under way."""
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    left = state[SEVEN_LEFT] if state[SEVEN_LEFT] > 0 else 7
    for i in range(P):
        for a in range(1, min(left, 6) + 1):  # the whole seven on one pawn is a plain move
            if _seven_part_ok(state, rules, state[TO_MOVE], i, a, left, state[SEVEN_MOVED]):
                out[n] = SPLIT0 + i * 6 + a - 1
                n += 1
    return n


@compiled
def legal_mask(state, rules, mask):
    """Fill `mask` (length n_actions) with 1 on exactly the legal actions."""
    buf = action_buffer(rules)
    n = legal_actions(state, rules, buf)
    mask[:] = 0
    for k in range(n):
        mask[buf[k]] = 1
    return n


# ---- applying a move ----------------------------------------------------------------------
@compiled
def decode_card_action(rules, action):
    """(kind, i, j, first, target) of an index into one card's block of actions (the table
    in the module docstring): kind is one of the ``ACT_*`` constants; i is the movable pawn
    slot (ACT_START, ACT_SORRY: the colour, 0 own, 1 partner's); j the second pawn of a
    split; first the distance pawn i moves in a split or a seven part; target the target
    slot. Unused fields are -1. The one decoder: the engine applies actions with it and
    :func:`sorry_env.board.game.decode_action` describes them with it."""
    P, T, START0, FWD0, BACK0, SPLIT0, SWAP0, SORRY0, N = action_offsets(rules)
    if action == 0:
        return ACT_PASS, -1, -1, -1, -1
    if action < FWD0:
        return ACT_START, action - START0, -1, -1, -1
    if action < BACK0:
        return ACT_MOVE, action - FWD0, -1, -1, -1
    if action < SPLIT0:
        return ACT_BACK1, action - BACK0, -1, -1, -1
    if action < SWAP0 and rules[R_TEAMS] == TEAMS_HASBRO2003:
        return ACT_SEVEN_PART, (action - SPLIT0) // 6, -1, (action - SPLIT0) % 6 + 1, -1
    if action < SWAP0:
        k = action - SPLIT0
        i = (k // 6) // (P - 1)
        jj = (k // 6) % (P - 1)
        return ACT_SPLIT, i, jj + 1 if jj >= i else jj, k % 6 + 1, -1
    if action < SORRY0:
        return ACT_SWAP, (action - SWAP0) // T, -1, -1, (action - SWAP0) % T
    return ACT_SORRY, (action - SORRY0) // T, -1, -1, (action - SORRY0) % T


@compiled
def decode_action(rules, action):
    """(card, kind, i, j, first, target) of an action index (0 <= action < num_actions):
    without hands card is -1 (the card in play is the state's) and the rest is
    :func:`decode_card_action`; with hands card is the card chosen, or for a discard -1 with
    kind ACT_DISCARD and i the card discarded."""
    if rules[R_HAND_SIZE]:
        n_card = action_offsets(rules)[8]
        if action >= N_CARDS * n_card:
            return -1, ACT_DISCARD, action - N_CARDS * n_card, -1, -1, -1
        kind, i, j, first, target = decode_card_action(rules, action % n_card)
        return action // n_card, kind, i, j, first, target
    if rules[R_FIRE_ICE]:
        offsets = action_offsets(rules)
        n_card = offsets[8]
        fire0 = (offsets[1] + 1) * n_card
        if action >= fire0:
            return -1, ACT_FIRE_DECLINE + action - fire0, -1, -1, -1, -1
        action = action % n_card  # the token choice: action_token
    kind, i, j, first, target = decode_card_action(rules, action)
    return -1, kind, i, j, first, target


@compiled
def apply_move(state, rules, action):
    """Carry out a legal action's pawn movement (no turn bookkeeping). The caller guarantees
    legality (see legal_actions). With hands the card leaves the hand (and stays CARD, so
    end_turn sees a played 2); a discard leaves CARD = -1."""
    _apply_move(state, rules, action, None)


@compiled
def apply_move_events(state, rules, action, events):
    """apply_move, recording what happened pawn by pawn into `events` (from event_buffer(),
    appended to; events[0] counts them): EV_PLACE for each pawn's own movement, EV_BUMP /
    EV_SWEEP for each pawn it sent to Start, EV_SLIDE for each slide, in the order they
    happened. Slots are the slots of the state before the move (the pawns are re-sorted
    only at the end)."""
    _apply_move(state, rules, action, events)


@compiled(inline="always")
def _apply_move(state, rules, action, events, extras=True):
    if extras is None:  # no tokens, no hands: the card's own move
        kind, i, j, first, target = decode_card_action(rules, action)
        _apply_decoded(state, rules, kind, i, j, first, target, events)
        return
    card, kind, i, j, first, target = decode_action(rules, action)
    if rules[R_FIRE_ICE]:
        _apply_tokens(state, rules, action, kind, events)
        if kind >= ACT_FIRE_DECLINE:
            return
    if rules[R_HAND_SIZE]:
        me = state[TO_MOVE]
        if kind == ACT_DISCARD:
            state[HANDS + me * N_CARDS + i] -= 1
            state[CARD] = -1
            return
        state[HANDS + me * N_CARDS + card] -= 1
        state[CARD] = card
    _apply_decoded(state, rules, kind, i, j, first, target, events)


@compiled
def _apply_tokens(state, rules, action, kind, events):
    """Fire and Ice: carry out the fire decision, or the token choice of a card action."""
    me = state[TO_MOVE]
    if kind == ACT_FIRE_MOVE:
        fire = state[FIRE] - 1
        square = fire_move_target(state, rules, me)
        state[FIRE_PENDING] = 0
        _land(state, me, fire % MAX_SLOTS, square, events)
        _sort_seats(state, rules)
        return
    if kind == ACT_FIRE_DECLINE:
        state[FIRE_PENDING] = 0
        return
    k = action_token(rules, action)
    if state[CARD] == C1:
        if k == 0:
            state[ICE] = 0
        else:
            seat, slot = target_pawn(state, rules, me, k - 1)
            state[ICE] = state[PAWNS + seat * MAX_SLOTS + slot] + 1
    elif state[CARD] == C2 and k > 0:
        state[FIRE] = me * MAX_SLOTS + k  # 1 + index of own slot k - 1


@compiled(from_python=False)
def _sort_seats(state, rules):
    """Re-sort every seat's pawns into canonical order, Fire staying on its pawn (it goes to
    the middle if that pawn was sent to Start or reached Home)."""
    ppp = rules[R_PAWNS]
    fire = state[FIRE] - 1
    fire_code = -1
    if fire >= 0:
        fire_code = state[PAWNS + fire]
        if fire_code >= HOME:
            state[FIRE] = 0
            fire = -1
    for s in range(N_SEATS):
        if state[ACTIVE + s]:
            sort_seat(state, s, ppp)
    if fire >= 0:
        seat = fire // MAX_SLOTS
        state[FIRE] = seat * MAX_SLOTS + _own_slot_at(state, seat, ppp, fire_code) + 1


@compiled(from_python=False)
def _apply_decoded(state, rules, kind, i, j, a, t, events):
    """Move the pawns for a decoded card action (see decode_card_action)."""
    ppp = rules[R_PAWNS]
    me = state[TO_MOVE]
    card = state[CARD]
    if kind == ACT_PASS:
        return
    if kind == ACT_START:
        seat = (me + 2 * i) % 4
        _land(state, seat, _start_slot(state, seat, ppp), START_CIRCLE[seat], events)
    elif kind == ACT_MOVE:
        seat, slot = movable_pawn(rules, me, i)
        step = CARD_STEP[card] if card != CSORRY else rules[R_SORRY_FORWARD]
        _land(state, seat, slot, _step_dest(seat, state[PAWNS + seat * MAX_SLOTS + slot], step), events)
    elif kind == ACT_BACK1:
        seat, slot = movable_pawn(rules, me, i)
        _land(state, seat, slot, BACKWARD[seat, state[PAWNS + seat * MAX_SLOTS + slot], 1], events)
    elif kind == ACT_SEVEN_PART:
        seat, slot = movable_pawn(rules, me, i)
        _land(state, seat, slot, FORWARD[seat, state[PAWNS + seat * MAX_SLOTS + slot], a], events)
        left = (state[SEVEN_LEFT] if state[SEVEN_LEFT] > 0 else 7) - a
        state[SEVEN_LEFT] = left
        state[SEVEN_MOVED] = 0 if left == 0 else state[SEVEN_MOVED] | (1 << i)
        if left > 0:
            return  # slots keep their order until the seven is finished
    elif kind == ACT_SPLIT:
        si, ki = movable_pawn(rules, me, i)
        sj, kj = movable_pawn(rules, me, j)
        _land(state, si, ki, FORWARD[si, state[PAWNS + si * MAX_SLOTS + ki], a], events)
        _land(state, sj, kj, FORWARD[sj, state[PAWNS + sj * MAX_SLOTS + kj], 7 - a], events)
    elif kind == ACT_SWAP:
        si, ki = movable_pawn(rules, me, i)
        seat, slot = target_pawn(state, rules, me, t)
        mine = state[PAWNS + si * MAX_SLOTS + ki]
        theirs = state[PAWNS + seat * MAX_SLOTS + slot]
        state[PAWNS + si * MAX_SLOTS + ki] = theirs
        state[PAWNS + seat * MAX_SLOTS + slot] = mine
        if events is not None:
            _record_event(events, EV_PLACE, si, ki, mine, theirs)
            _record_event(events, EV_PLACE, seat, slot, theirs, mine)
        # Each swapped pawn on a triangle not of its colour slides, the mover's pawn first.
        _slide_if_foreign_triangle(state, si, ki, events)
        if state[PAWNS + seat * MAX_SLOTS + slot] == mine:
            _slide_if_foreign_triangle(state, seat, slot, events)
    else:  # ACT_SORRY
        mover = (me + 2 * i) % 4
        seat, slot = target_pawn(state, rules, me, t)
        square = state[PAWNS + seat * MAX_SLOTS + slot]
        _land(state, mover, _start_slot(state, mover, ppp), square, events)
    _sort_seats(state, rules)


@compiled(from_python=False)
def _all_home(state, seat, ppp):
    for i in range(ppp):
        if state[PAWNS + seat * MAX_SLOTS + i] != HOME:
            return False
    return True


@compiled
def end_turn(state, rules, extras=True):
    """Discard the played card, record a win, and pass the turn (the same seat after a 2,
    when the rules say so). Leaves CARD = -1: the next card is still to be drawn. `extras`:
    see COMPILE COST."""
    me = state[TO_MOVE]
    card = state[CARD]
    ppp = rules[R_PAWNS]
    state[CARD] = -1
    state[TURN] += 1
    # A move may finish either team colour (team rules: the partner's pawns too).
    for c in range(2 if rules[R_TEAMS] else 1):
        seat = (me + 2 * c) % 4
        if _all_home(state, seat, ppp) and (rules[R_TEAMS] == 0 or _all_home(state, (seat + 2) % 4, ppp)):
            state[WINNER] = me
            state[DRAW_AGAIN] = 0
            return
    if card == C2 and rules[R_TWO_DRAWS_AGAIN]:
        state[DRAW_AGAIN] = 1
    else:
        state[DRAW_AGAIN] = 0
        state[TO_MOVE] = other_seat(state, me, np.int64(1))  # np.int64: see COMPILE COST
        # Fire and Ice: a fire move is decided at the start of the owner's turn, before the draw.
        if extras is not None and rules[R_FIRE_ICE] and fire_move_target(state, rules, state[TO_MOVE]) >= 0:
            state[FIRE_PENDING] = 1


# ---- cards --------------------------------------------------------------------------------
@compiled(from_python=False)
def _reshuffle(state, rules):
    """The draw pile is empty: the discards (the pack less the cards in hands) become a new
    draw pile, in an order drawn from the state's generator."""
    held = np.empty(N_CARDS, dtype=np.int64)  # not np.zeros, nested loops: see COMPILE COST
    for c in range(N_CARDS):
        held[c] = 0
    for k in range(N_SEATS * N_CARDS):
        held[k % N_CARDS] += state[HANDS + k]
    pile = np.empty(N_CARDS, dtype=np.int64)
    for c in range(N_CARDS):
        pile[c] = rules[R_PACK + c] - held[c]
        state[REMAIN + c] = pile[c]
    pos = _lay_out(state, np.int64(DECK), held)  # np.int64: see COMPILE COST
    state[DRAW_POS] = pos - DECK
    _lay_out(state, pos, pile)
    shuffle_draw_pile(state, rules)


@compiled(from_python=False)
def _lay_out(target, start, counts):
    """Write counts[c] copies of each card c, in card order, into `target` from index `start`;
    returns the index after the last. One loop with a data-dependent step: written as nested
    loops over the cards, LLVM unrolls and vectorizes it into a hundred times the code."""
    k = start
    c = 0
    written = 0
    while c < N_CARDS:
        if written < counts[c]:
            target[k] = c
            k += 1
            written += 1
        else:
            c += 1
            written = 0
    return k


@compiled(inline="always")
def _take_top(state, rules):
    """Take the top card of the draw pile (reshuffling the discards first if it is empty)."""
    if state[DRAW_POS] >= rules[R_PACK_SIZE]:
        _reshuffle(state, rules)
    card = state[DECK + state[DRAW_POS]]
    state[DRAW_POS] += 1
    state[REMAIN + card] -= 1
    return card


@compiled(inline="always")
def draw(state, rules):
    """Turn the top card of the draw pile into the card to play."""
    state[CARD] = _take_top(state, rules)


@compiled
def draw_to_hand(state, rules, seat):
    """Play for points: the top card of the draw pile goes into `seat`'s hand."""
    state[HANDS + seat * N_CARDS + _take_top(state, rules)] += 1


@compiled
def redeal_hidden(state, rules, viewer, extras=True):
    """Determinize what `viewer` cannot see: the draw pile and the other seats' hands are
    pooled, shuffled from the state's generator and dealt back in the same sizes. `extras`:
    see COMPILE COST."""
    if extras is None or rules[R_HAND_SIZE] == 0:
        shuffle_draw_pile(state, rules)
        return
    size = rules[R_PACK_SIZE]
    pos = state[DRAW_POS]
    pool = np.empty(size, dtype=np.int64)
    n = size - pos
    for k in range(n):
        pool[k] = state[DECK + pos + k]
    hand_sizes = np.zeros(4, dtype=np.int64)
    for seat in range(N_SEATS):
        if seat == viewer:
            continue
        hand = state[HANDS + seat * N_CARDS : HANDS + (seat + 1) * N_CARDS]
        end = _lay_out(pool, n, hand)
        hand_sizes[seat] = end - n
        n = end
        hand[:] = 0
    for k in range(n - 1, 0, -1):
        r = randint(state, k + 1)
        tmp = pool[k]
        pool[k] = pool[r]
        pool[r] = tmp
    k = 0
    for seat in range(N_SEATS):
        for _ in range(hand_sizes[seat]):
            state[HANDS + seat * N_CARDS + pool[k]] += 1
            k += 1
    for c in range(N_CARDS):
        state[REMAIN + c] = 0
    for q in range(pos, size):
        state[DECK + q] = pool[k]
        state[REMAIN + pool[k]] += 1
        k += 1
    # The cards out of the pile (discards, hands), in card order: only their counts matter.
    out_of_pile = np.empty(N_CARDS, dtype=np.int64)
    for c in range(N_CARDS):
        out_of_pile[c] = rules[R_PACK + c] - state[REMAIN + c]
    _lay_out(state, np.int64(DECK), out_of_pile)


@compiled
def determinize(state, rules, viewer, seed):
    """Re-draw everything `viewer` cannot see (the draw-pile order; with hands also the
    other players' hands) from `seed` alone. The unseen cards are first put in a canonical
    order, so whatever arrangement the state held (hidden information, or another
    determinization of it) has no influence on the result."""
    pos = state[DRAW_POS]
    unseen = np.zeros(N_CARDS, dtype=np.int64)
    for c in range(N_CARDS):
        unseen[c] = state[REMAIN + c]
    if rules[R_HAND_SIZE]:
        hand_sizes = np.zeros(4, dtype=np.int64)
        for seat in range(N_SEATS):
            if seat != viewer:
                for c in range(N_CARDS):
                    unseen[c] += state[HANDS + seat * N_CARDS + c]
                    hand_sizes[seat] += state[HANDS + seat * N_CARDS + c]
                    state[HANDS + seat * N_CARDS + c] = 0
        c = 0
        for seat in range(N_SEATS):
            for _ in range(hand_sizes[seat]):
                while unseen[c] == 0:
                    c += 1
                state[HANDS + seat * N_CARDS + c] += 1
                unseen[c] -= 1
    for c in range(N_CARDS):
        state[REMAIN + c] = unseen[c]
    _lay_out(state, DECK + pos, unseen)
    state[RNG] = seed & 0xFFFFFFFF
    redeal_hidden(state, rules, viewer)


@compiled
def public_state(state, out):
    """`out` := `state` without its hidden parts (draw-pile order, generator, draw position)."""
    copy_state(state, out)
    out[RNG] = 0
    out[DRAW_POS] = 0
    out[DECK : DECK + MAX_PACK] = 0


@compiled
def own_view(state, rules, viewer, out):
    """`out` := what `viewer` may know of `state`: :func:`public_state`, and with hands (play
    for points) the other seats' hands zeroed, their cards counted with the draw pile in
    ``REMAIN`` (cards `viewer` has not seen; which of them are in the pile is hidden). Without
    hands it equals :func:`public_state`. Two states that differ only in what `viewer` cannot
    see (another hand, the draw order, the generator) give the same view."""
    public_state(state, out)
    if rules[R_HAND_SIZE] == 0:
        return
    for seat in range(N_SEATS):
        if seat == viewer:
            continue
        for c in range(N_CARDS):
            out[REMAIN + c] += state[HANDS + seat * N_CARDS + c]
            out[HANDS + seat * N_CARDS + c] = 0


@compiled
def play_before_draw(state, rules, action):
    """:func:`play` without the replacement card a player with a hand draws: the position
    the mover chose, before anything hidden is revealed (with hands the state's own hand is
    one card short). Without hands it equals :func:`play`. For afterstate evaluation only:
    the game goes on from :func:`play`."""
    fire_decision = state[FIRE_PENDING]
    _apply_move(state, rules, action, None)  # not apply_move: one compiled layer less
    if fire_decision or state[SEVEN_LEFT] > 0:
        return  # as play: a fire decision or a split seven under way keeps the turn
    end_turn(state, rules, True)


@compiled
def deal(state, rules, card):
    """Make `card` the card to play, taking it out of the draw pile (for search over the
    possible draws), at a chance node. An empty draw pile is first reshuffled from the
    discards, exactly as a real draw would. The card must then be in the draw pile
    (REMAIN > 0)."""
    if state[DRAW_POS] >= rules[R_PACK_SIZE]:
        _reshuffle(state, rules)
    pos = state[DRAW_POS]
    size = rules[R_PACK_SIZE]
    for k in range(pos, size):
        if state[DECK + k] == card:
            state[DECK + k] = state[DECK + pos]
            state[DECK + pos] = card
            break
    draw(state, rules)


@compiled
def shuffle_draw_pile(state, rules):
    """Reorder the remaining draw pile from the state's generator (determinization: the
    order is hidden information, the remaining counts are public)."""
    pos = state[DRAW_POS]
    size = rules[R_PACK_SIZE]
    for k in range(size - 1, pos, -1):
        r = pos + randint(state, k - pos + 1)
        tmp = state[DECK + k]
        state[DECK + k] = state[DECK + r]
        state[DECK + r] = tmp


@compiled(inline="always")
def play(state, rules, action, extras=True):
    """Move and end the turn (with hands, the mover first draws a replacement card), leaving
    the next card undrawn. A part of a split seven that leaves steps to move keeps the turn
    and the card; a fire decision (Fire and Ice) keeps the turn, the card still to draw.
    Ending a turn may leave the next player a fire decision (FIRE_PENDING). `extras`: see
    COMPILE COST."""
    mover = state[TO_MOVE]
    fire_decision = state[FIRE_PENDING]
    _apply_move(state, rules, action, None, extras)  # not apply_move: one compiled layer less
    if fire_decision or state[SEVEN_LEFT] > 0:
        return  # a fire decision goes on to the draw; a split seven under way keeps the turn
    if extras is not None and rules[R_HAND_SIZE]:
        draw_to_hand(state, rules, mover)
    end_turn(state, rules, extras)


@compiled
def step(state, rules, action, extras=True):
    """One full step: play the action, then draw the next card unless the game is over, the
    turn continues (a split seven under way), the players hold hands, or the next player
    first decides on a fire move. `extras`: see COMPILE COST."""
    play(state, rules, action, extras)
    if state[WINNER] < 0 and state[CARD] < 0 and rules[R_HAND_SIZE] == 0 and state[FIRE_PENDING] == 0:
        draw(state, rules)


# ---- new games ----------------------------------------------------------------------------
@compiled
def init_state(state, rules, active, seed, extras=True):
    """A new game in `state`: every pawn in Start (fast play: one on its circle), the pack
    shuffled from `seed`, a random first player among the active seats, a card drawn.
    `extras`: see COMPILE COST."""
    ppp = rules[R_PAWNS]
    state[:] = 0
    for seat in range(N_SEATS):
        state[ACTIVE + seat] = active[seat]
        for i in range(MAX_SLOTS):
            code = -1
            if active[seat] and i < ppp:
                code = START
                if rules[R_FAST_PLAY] and i == 0:
                    code = START_CIRCLE[seat]
            state[PAWNS + seat * MAX_SLOTS + i] = code
    state[RNG] = seed & 0xFFFFFFFF
    # An empty draw pile: the first draw below lays out and shuffles the whole pack (_reshuffle).
    state[DRAW_POS] = rules[R_PACK_SIZE]
    n_active = np.int64(0)  # np.int64: see COMPILE COST
    for seat in range(N_SEATS):
        n_active += active[seat]
    pick = randint(state, n_active)
    for seat in range(N_SEATS):
        if active[seat]:
            if pick == 0:
                state[TO_MOVE] = seat
                break
            pick -= 1
    state[WINNER] = -1
    state[CARD] = -1
    if extras is not None and rules[R_HAND_SIZE]:
        for seat in range(N_SEATS):
            if active[seat]:
                for _ in range(rules[R_HAND_SIZE]):
                    draw_to_hand(state, rules, seat)
    else:
        draw(state, rules)


@compiled
def random_playout(state, rules, max_turns):
    """Play uniformly random legal moves until the game ends or `max_turns` cards have been
    played in total; returns the number of moves made."""
    buf = action_buffer(rules)
    moves = 0
    while state[WINNER] < 0 and state[TURN] < max_turns:
        n = legal_actions(state, rules, buf)
        step(state, rules, buf[randint(state, n)])
        moves += 1
    return moves
