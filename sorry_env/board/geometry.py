"""Board geometry of Sorry!: square codes and precomputed movement tables.

Squares are absolute. Seat k owns side k of the board (k = 0..3, clockwise); every feature
of seat k is seat 0's shifted by 15k squares along the 60-square track.

A pawn's position is one integer code, the same for every seat:

==========  ===========================================
code        meaning
==========  ===========================================
0..59       track square (forward is +1 mod 60)
60..64      ``safe 0..4`` of the pawn's OWN safety zone
65          Home
66          Start
==========  ===========================================

Safety and Home codes are always relative to the pawn's own colour, so a pawn can never be
in another colour's zone. Everything the rules need about the board is a table lookup here;
the tables are built once at import and passed to the compiled engine as constants.
"""

import numpy as np

N_SEATS = 4
TRACK = 60
SIDE = 15
SAFE0 = 60  # code of safe 0; safe i is SAFE0 + i
SAFE_LEN = 5
HOME = 65
START = 66
N_CODES = 67
MAX_STEP = 12  # the largest distance any card moves a single pawn

# Seat 0's features (every other seat: + 15k, mod 60).
SAFETY_ENTRY_0 = 2
START_CIRCLE_0 = 4
SLIDES_0 = ((1, 4), (9, 13))  # (triangle, end) of the short and the long slide


def safety_entry(seat: int) -> int:
    return (SAFETY_ENTRY_0 + SIDE * seat) % TRACK


def start_circle(seat: int) -> int:
    return (START_CIRCLE_0 + SIDE * seat) % TRACK


def _forward(seat: int, code: int, n: int) -> int:
    """Destination code of a forward move of n squares, or -1 if it is impossible."""
    if code == HOME or code == START:
        return -1
    if code >= SAFE0:
        depth = code - SAFE0 + n  # 0..4 safe, 5 Home
        if depth < SAFE_LEN:
            return SAFE0 + depth
        return HOME if depth == SAFE_LEN else -1
    # A forward move that passes the pawn's own safety entry turns into the safety zone,
    # however the pawn came to be behind the entry.
    to_entry = (safety_entry(seat) - code) % TRACK
    if n <= to_entry:
        return (code + n) % TRACK
    depth = n - to_entry - 1  # safe 0 is one step past the entry
    if depth < SAFE_LEN:
        return SAFE0 + depth
    return HOME if depth == SAFE_LEN else -1


def _backward(seat: int, code: int, n: int) -> int:
    """Destination code of a backward move of n squares, or -1 if it is impossible."""
    if code == HOME or code == START:
        return -1
    if code >= SAFE0:
        depth = code - SAFE0 - n
        if depth >= 0:
            return SAFE0 + depth
        # Leaves the zone backwards through the entry square onto the track.
        return (safety_entry(seat) + depth + 1) % TRACK
    return (code - n) % TRACK


def _steps_to_home(seat: int, code: int) -> int:
    if code == HOME:
        return 0
    if code == START:
        return 66  # 1 to leave Start onto the circle, then 64 + 1 (as ordering only)
    if code >= SAFE0:
        return SAFE_LEN - (code - SAFE0)
    return (safety_entry(seat) - code) % TRACK + SAFE_LEN + 1


def _build():
    fwd = np.full((N_SEATS, N_CODES, MAX_STEP + 1), -1, dtype=np.int64)
    bwd = np.full((N_SEATS, N_CODES, MAX_STEP + 1), -1, dtype=np.int64)
    steps = np.zeros((N_SEATS, N_CODES), dtype=np.int64)
    for seat in range(N_SEATS):
        for code in range(N_CODES):
            steps[seat, code] = _steps_to_home(seat, code)
            for n in range(1, MAX_STEP + 1):
                fwd[seat, code, n] = _forward(seat, code, n)
                bwd[seat, code, n] = _backward(seat, code, n)
    # Slides: SLIDE_OWNER[sq] is the colour of the slide whose triangle is sq (-1: none),
    # SLIDE_END[sq] that slide's end square.
    owner = np.full(TRACK, -1, dtype=np.int64)
    end = np.full(TRACK, -1, dtype=np.int64)
    for seat in range(N_SEATS):
        for tri, last in SLIDES_0:
            owner[(tri + SIDE * seat) % TRACK] = seat
            end[(tri + SIDE * seat) % TRACK] = (last + SIDE * seat) % TRACK
    circle = np.array([start_circle(s) for s in range(N_SEATS)], dtype=np.int64)
    entry = np.array([safety_entry(s) for s in range(N_SEATS)], dtype=np.int64)
    return fwd, bwd, steps, owner, end, circle, entry


FORWARD, BACKWARD, STEPS_TO_HOME, SLIDE_OWNER, SLIDE_END, START_CIRCLE, SAFETY_ENTRY = _build()
for _table in (FORWARD, BACKWARD, STEPS_TO_HOME, SLIDE_OWNER, SLIDE_END, START_CIRCLE, SAFETY_ENTRY):
    _table.setflags(write=False)
