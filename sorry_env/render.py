"""Text drawing of the board: the 60 track squares around a 16 x 16 grid, each seat's
safety zone running inwards from its entry square, Start and Home counts beside them."""
from . import engine as E
from .geometry import HOME, SAFE0, SAFE_LEN, SIDE, SLIDE_END, SLIDE_OWNER, START, TRACK, SAFETY_ENTRY, START_CIRCLE
from .rules import CARD_NAMES

COLOURS = ("R", "B", "Y", "G")  # seat 0..3: Red, Blue, Yellow, Green (clockwise)
COLOUR_NAMES = ("Red", "Blue", "Yellow", "Green")
# Per side: the cell of the side's first square, the step along the side, the step inwards.
_SIDES = (((0, 0), (1, 0), (0, 1)), ((15, 0), (0, 1), (-1, 0)),
          ((15, 15), (-1, 0), (0, -1)), ((0, 15), (0, -1), (1, 0)))


def _track_cell(square):
    (x, y), (dx, dy), _ = _SIDES[square // SIDE]
    k = square % SIDE
    return x + dx * k, y + dy * k


def _inward(square, depth):
    x, y = _track_cell(square)
    _, _, (ix, iy) = _SIDES[square // SIDE]
    return x + ix * depth, y + iy * depth


def render_ansi(state, ppp):
    grid = [["  " for _ in range(16)] for _ in range(16)]
    for sq in range(TRACK):
        x, y = _track_cell(sq)
        grid[y][x] = " ."
    for sq in range(TRACK):
        if SLIDE_OWNER[sq] >= 0:
            colour = COLOURS[SLIDE_OWNER[sq]].lower()
            s = sq
            while s != SLIDE_END[sq]:
                s = (s + 1) % TRACK
                x, y = _track_cell(s)
                grid[y][x] = " -"
            x, y = _track_cell(sq)
            grid[y][x] = " " + colour
    for seat in range(4):
        colour = COLOURS[seat].lower()
        for d in range(SAFE_LEN):
            x, y = _inward(SAFETY_ENTRY[seat], d + 1)
            grid[y][x] = " " + colour
        x, y = _track_cell(START_CIRCLE[seat])
        grid[y][x] = " o"
    for seat in range(4):
        if not state[E.ACTIVE + seat]:
            continue
        letter = COLOURS[seat]
        n_start = n_home = 0
        for i in range(ppp):
            code = state[E.PAWNS + seat * E.MAX_SLOTS + i]
            if code == START:
                n_start += 1
            elif code == HOME:
                n_home += 1
            else:
                x, y = _track_cell(code) if code < TRACK else _inward(SAFETY_ENTRY[seat], code - SAFE0 + 1)
                grid[y][x] = letter + str(i)
        x, y = _inward(SAFETY_ENTRY[seat], SAFE_LEN + 1)
        grid[y][x] = f"H{n_home}"
        x, y = _inward(START_CIRCLE[seat], 1)
        grid[y][x] = f"S{n_start}"
    lines = ["".join(row) for row in grid]
    seats = ", ".join(f"{COLOURS[s]}={COLOUR_NAMES[s]} (seat {s})" for s in range(4) if state[E.ACTIVE + s])
    card = int(state[E.CARD])
    lines.append(seats)
    lines.append(f"turn {int(state[E.TURN])}: seat {int(state[E.TO_MOVE])} ({COLOUR_NAMES[state[E.TO_MOVE]]}) "
                 f"to play {CARD_NAMES[card] if card >= 0 else '(no card)'}"
                 + (" (draw again)" if state[E.DRAW_AGAIN] else ""))
    if state[E.WINNER] >= 0:
        lines.append(f"seat {int(state[E.WINNER])} ({COLOUR_NAMES[state[E.WINNER]]}) wins")
    lines.append("legend: R0..G3 pawns (colour, canonical index), o start circle, r/b/y/g slide "
                 "triangle or safety square, - slide, S# Start count, H# Home count")
    return "\n".join(lines)
