"""Text drawing of the board (``render_mode="ansi"`` and the play command).

The board is laid out as :mod:`sorry_env.board.board_layout` says (the same picture as the images of
:mod:`sorry_env.board.draw`): the 60 track squares round the edge of a 16 x 16 grid, Red (seat 0)
along the bottom, pawns moving clockwise. Every track square's number is printed beside it,
round the outside of the grid, so the square numbers in move texts can be found on the board.
Each cell is three characters wide:

- ``R1`` .. ``G4``: a pawn, by colour letter and label (stable through a game when a
  :class:`sorry_env.board.narrate.PawnLabels` is given; otherwise numbered by slot);
- ``r0`` .. ``r4``: Red's safety squares 0..4 (``b``, ``y``, ``g`` for the others);
- ``r>``: the triangle of a Red slide, ``-`` the rest of a slide; ``o`` a start square;
- ``S2`` / ``H1``: how many pawns are in that colour's Start / Home.

Below the grid: each seat's pawns in Start and Home by label, whose turn and the card, the
partnerships under team rules, and one hand under play for points.
"""

from . import engine as E
from .board_layout import GRID, home_centre, safe_cell, slide_squares, slides, start_centre, track_cell
from .geometry import HOME, N_SEATS, SAFE0, SAFE_LEN, START, START_CIRCLE, TRACK
from .rules import CARD_NAMES, N_CARDS

COLOURS = ("R", "B", "Y", "G")  # seat 0..3: Red, Blue, Yellow, Green (clockwise)
COLOUR_NAMES = ("Red", "Blue", "Yellow", "Green")
_CELL = 3  # characters per cell


def _cell_of(point):
    return int(point[0]), int(point[1])


def pawn_label(labels, seat: int, slot: int) -> str:
    """A pawn's label: from `labels` (a PawnLabels) if given, else by slot (R1 = slot 0)."""
    return labels.label(seat, slot) if labels is not None else f"{COLOURS[seat]}{slot + 1}"


def hand_text(state, seat: int) -> str:
    """The cards in `seat`'s hand (play for points), e.g. ``1 5 5 11 SORRY``."""
    cards = [CARD_NAMES[c] for c in range(N_CARDS) for _ in range(int(state[E.HANDS + seat * N_CARDS + c]))]
    return " ".join(cards) if cards else "(empty)"


def token_text(state, labels=None) -> str:
    """Fire and Ice: where the two tokens are, e.g. ``Fire: R2 (square 12) | Ice: middle``."""
    parts = []
    for name, (seat, slot) in (("Fire", E.fire_pawn(state)), ("Ice", E.ice_pawn(state))):
        if seat < 0:
            parts.append(f"{name}: middle")
            continue
        code = int(state[E.PAWNS + seat * E.MAX_SLOTS + slot])
        place = f"safe {code - SAFE0}" if code >= SAFE0 else f"square {code}"
        parts.append(f"{name}: {pawn_label(labels, int(seat), int(slot))} ({place})")
    return " | ".join(parts)


def render_ansi(state, ppp, labels=None, hand_seat=None, teams=False, fire_ice=False) -> str:
    """The board as text. `labels`: a :class:`sorry_env.board.narrate.PawnLabels` following this
    game (None: pawns numbered by slot); `hand_seat`: show that seat's hand (play for
    points); `teams`: name the partnerships; `fire_ice`: say where Fire and Ice are (shown
    whenever a token is on a pawn, too)."""
    grid = _empty_grid()
    active = [s for s in range(N_SEATS) if state[E.ACTIVE + s]]
    in_start, at_home = _place_pawns(grid, state, ppp, labels, active)
    lines = _grid_lines(grid)
    to_move = int(state[E.TO_MOVE])
    for seat in active:
        marker = "  <- to play" if seat == to_move and state[E.WINNER] < 0 else ""
        lines.append(
            f"{COLOUR_NAMES[seat]} (seat {seat}): Start {' '.join(in_start[seat]) or '-'} | "
            f"Home {' '.join(at_home[seat]) or '-'}{marker}"
        )
    if teams:
        lines.append("teams: Red + Yellow against Blue + Green (each moves its partner's pawns too)")
    if fire_ice or state[E.FIRE] or state[E.ICE]:
        lines.append(token_text(state, labels))
    lines += _turn_lines(state, hand_seat)
    lines.append(
        "legend: R1..G4 pawns; numbers round the edge: track squares; r0..r4 Red's safety squares "
        "(b, y, g: the others'); r> a Red slide's triangle, - slide; o start square; "
        "S# pawns in Start, H# pawns Home"
    )
    return "\n".join(lines)


def _empty_grid() -> list[list[str]]:
    """The board's cells without pawns: track, slides, safety zones and start squares."""
    grid = [["" for _ in range(GRID)] for _ in range(GRID)]
    for sq in range(TRACK):
        col, row = track_cell(sq)
        grid[row][col] = "."
    for owner, first, last in slides():
        for sq in slide_squares(first, last)[1:]:
            col, row = track_cell(sq)
            grid[row][col] = "-"
        col, row = track_cell(first)
        grid[row][col] = COLOURS[owner].lower() + ">"
    for seat in range(N_SEATS):
        for k in range(SAFE_LEN):
            col, row = safe_cell(seat, k)
            grid[row][col] = f"{COLOURS[seat].lower()}{k}"
        col, row = track_cell(int(START_CIRCLE[seat]))
        grid[row][col] = "o"
    return grid


def _place_pawns(grid, state, ppp, labels, active) -> tuple[dict[int, list[str]], dict[int, list[str]]]:
    """Put the pawns on the board into `grid` with each seat's Start and Home counts; return
    the labels of each seat's pawns in Start and at Home."""
    in_start: dict[int, list[str]] = {}
    at_home: dict[int, list[str]] = {}
    for seat in active:
        in_start[seat], at_home[seat] = [], []
        for i in range(ppp):
            code = int(state[E.PAWNS + seat * E.MAX_SLOTS + i])
            label = pawn_label(labels, seat, i)
            if code == START:
                in_start[seat].append(label)
            elif code == HOME:
                at_home[seat].append(label)
            else:
                col, row = track_cell(code) if code < TRACK else safe_cell(seat, code - SAFE0)
                grid[row][col] = label
        col, row = _cell_of(home_centre(seat))
        grid[row][col] = f"H{len(at_home[seat])}"
        col, row = _cell_of(start_centre(seat))
        grid[row][col] = f"S{len(in_start[seat])}"
    return in_start, at_home


def _grid_lines(grid) -> list[str]:
    """The grid as lines of text, with the track's square numbers round the edge."""
    number_at = {track_cell(sq): sq for sq in range(TRACK)}
    pad = " " * _CELL

    def ruler(row):
        return pad + "".join(f"{number_at[(col, row)]:>{_CELL}}" for col in range(GRID)) + pad

    lines = [ruler(0)]
    for row in range(GRID):
        left = f"{number_at[(0, row)]:>{_CELL}}"
        right = f"{number_at[(GRID - 1, row)]:>{_CELL}}"
        lines.append(left + "".join(f"{cell:>{_CELL}}" for cell in grid[row]) + right)
    lines.append(ruler(GRID - 1))
    return lines


def _turn_lines(state, hand_seat) -> list[str]:
    """The hand shown, whose turn it is with what card, and the winner."""
    lines = []
    to_move = int(state[E.TO_MOVE])
    card = int(state[E.CARD])
    if hand_seat is not None:
        lines.append(f"{COLOUR_NAMES[hand_seat]}'s hand: {hand_text(state, hand_seat)}")
    playing = (
        f"to play {CARD_NAMES[card]}"
        if card >= 0
        else ("to play a card" if hand_seat is not None else "(no card drawn)")
    )
    if state[E.FIRE_PENDING]:
        playing = "decides on a fire move before drawing"
    lines.append(
        f"turn {int(state[E.TURN])}: {COLOUR_NAMES[to_move]} {playing}"
        + (" (draw again)" if state[E.DRAW_AGAIN] else "")
    )
    if state[E.WINNER] >= 0:
        lines.append(f"seat {int(state[E.WINNER])} ({COLOUR_NAMES[state[E.WINNER]]}) wins")
    return lines
