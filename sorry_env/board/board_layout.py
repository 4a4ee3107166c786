"""Where things are on a drawn Sorry! board: pure geometry, no drawing.

The board is a ``GRID`` x ``GRID`` square of cells (16 x 16); the 60 track squares run round its
edge, 16 cells a side with the corners shared, as on the real board. Coordinates are
``(col, row)`` with row 0 at the top; continuous points (circle centres) are in cell units,
``x`` = col and ``y`` = row, so cell ``(c, r)`` covers ``[c, c+1) x [r, r+1)`` and its centre is
``(c + 0.5, r + 0.5)``.

Seat 0 sits along the bottom edge, like a player sitting at a real board; the other seats
follow in turn order going clockwise round it (seat 1 on the left edge, seat 2 at the top,
seat 3 on the right), and pawns move clockwise too (:mod:`sorry_env.board.geometry`: forward is +1).
Every feature of seat ``k`` is seat 0's turned a quarter turn clockwise ``k`` times about the
board's centre, just as every square number is seat 0's plus ``15k``.

Seat 0's side, read from the bottom-right corner (square 0) leftwards:

- square 0 is the corner; squares 1..14 run right to left along the bottom row;
- the short slide runs 1 -> 4 and the long slide 9 -> 13 (:data:`sorry_env.board.geometry.SLIDES_0`);
- the safety zone leaves the track at the entry square 2 and runs straight up, inward, five cells
  (safe 0 next to the entry), ending at the Home circle;
- the Start circle sits just inside the board above the start square 4, where pawns come out.

Consumers: :mod:`sorry_env.board.draw` (images) and the browser game (``layout()`` as JSON).
"""

from __future__ import annotations

from . import geometry as G

GRID = 16  # cells a side; the track is the 4 * 16 - 4 = 60 edge cells
CENTRE = GRID / 2  # the board's centre point, in cell units
START_RADIUS = 1.15  # radius of the Start and Home circles, in cell units
HOME_RADIUS = 1.15

if 4 * GRID - 4 != G.TRACK or GRID - 1 != G.SIDE:
    raise AssertionError("board_layout.GRID does not match sorry_env.board.geometry's track")

# Seat 0's features in continuous cell units (x, y); the rest are rotations of these.
_SAFE_COL_0 = GRID - 1 - G.SAFETY_ENTRY_0  # the column of seat 0's entry square (13)
_START_COL_0 = GRID - 1 - G.START_CIRCLE_0  # the column of seat 0's start square (11)
_START_CENTRE_0 = (_START_COL_0 + 0.5, GRID - 1 - 1.35)  # just above the start square
# Home sits right past safe 4 (row GRID-2-4, top edge at y = GRID-1-SAFE_LEN), just clear of it:
# a circle overlapping the last safety square hid part of it and of a pawn standing there.
_HOME_CENTRE_0 = (_SAFE_COL_0 + 0.5, GRID - 1 - G.SAFE_LEN - HOME_RADIUS - 0.05)


def _turn(point: tuple[float, float], seat: int) -> tuple[float, float]:
    """``point`` turned a quarter turn clockwise ``seat`` times about the board's centre.

    On screen (y down) a clockwise quarter turn maps the offset (dx, dy) to (-dy, dx).
    """
    dx, dy = point[0] - CENTRE, point[1] - CENTRE
    for _ in range(seat % G.N_SEATS):
        dx, dy = -dy, dx
    return (CENTRE + dx, CENTRE + dy)


def _cell_of(point: tuple[float, float]) -> tuple[int, int]:
    return (int(point[0] // 1), int(point[1] // 1))


def _check_seat(seat: int) -> None:
    if not 0 <= seat < G.N_SEATS:
        raise ValueError(f"seat must be 0..{G.N_SEATS - 1}, got {seat!r}")


def track_cell(square: int) -> tuple[int, int]:
    """``(col, row)`` of track square 0..59; row 0 is the top."""
    if not 0 <= square < G.TRACK:
        raise ValueError(f"track square must be 0..{G.TRACK - 1}, got {square!r}")
    seat, along = divmod(square, G.SIDE)
    # Seat 0's side: square 0 is the bottom-right corner, then leftwards along the bottom row.
    centre_0 = (GRID - 1 - along + 0.5, GRID - 1 + 0.5)
    return _cell_of(_turn(centre_0, seat))


def safe_cell(seat: int, k: int) -> tuple[int, int]:
    """``(col, row)`` of ``seat``'s safety square ``k`` = 0..4 (0 nearest the entry)."""
    _check_seat(seat)
    if not 0 <= k < G.SAFE_LEN:
        raise ValueError(f"safety square must be 0..{G.SAFE_LEN - 1}, got {k!r}")
    centre_0 = (_SAFE_COL_0 + 0.5, GRID - 2 - k + 0.5)
    return _cell_of(_turn(centre_0, seat))


def start_centre(seat: int) -> tuple[float, float]:
    """Centre of ``seat``'s Start circle, in cell units (x = col, y = row)."""
    _check_seat(seat)
    return _turn(_START_CENTRE_0, seat)


def home_centre(seat: int) -> tuple[float, float]:
    """Centre of ``seat``'s Home circle, in cell units (x = col, y = row)."""
    _check_seat(seat)
    return _turn(_HOME_CENTRE_0, seat)


def slides() -> list[tuple[int, int, int]]:
    """``(owner seat, first square, last square)`` of the 8 slides, seat by seat, short one first."""
    return [
        (seat, (first + G.SIDE * seat) % G.TRACK, (last + G.SIDE * seat) % G.TRACK)
        for seat in range(G.N_SEATS)
        for first, last in G.SLIDES_0
    ]


def slide_squares(first: int, last: int) -> list[int]:
    """Track squares a slide covers, triangle first (slides never wrap past square 59 today, but may)."""
    return [(first + i) % G.TRACK for i in range((last - first) % G.TRACK + 1)]


def layout() -> dict:
    """Everything above as JSON-able data.

    ``{"grid": 16, "track": [[col, row] x 60], "safe": [[[col, row] x 5] x 4],
    "start": [[x, y] x 4], "home": [[x, y] x 4], "slides": [[seat, first, last] x 8],
    "start_square": [4 squares], "safety_entry": [4 squares], "circle_radius": r}``
    (``start_square`` and ``safety_entry`` and ``circle_radius`` are extras for labelling).
    """
    seats = range(G.N_SEATS)
    return {
        "grid": GRID,
        "track": [list(track_cell(sq)) for sq in range(G.TRACK)],
        "safe": [[list(safe_cell(seat, k)) for k in range(G.SAFE_LEN)] for seat in seats],
        "start": [list(start_centre(seat)) for seat in seats],
        "home": [list(home_centre(seat)) for seat in seats],
        "slides": [list(s) for s in slides()],
        "start_square": [G.start_circle(seat) for seat in seats],
        "safety_entry": [G.safety_entry(seat) for seat in seats],
        "circle_radius": START_RADIUS,
    }
