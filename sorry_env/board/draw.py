"""Pictures of the board: an engine state drawn with Pillow (``render_mode="rgb_array"``,
``"human"`` and replay GIFs).

Drawing lives here, never in the engine; where things go comes from
:mod:`sorry_env.board.board_layout` (the same layout as the text board of :mod:`sorry_env.board.render`).

:func:`draw_board` returns a Pillow image of ``size`` x ``size`` pixels (default 640) showing:

- the 60 track squares round the edge, their numbers in small print (every fifth square, the
  corners and each colour's start square), Red (seat 0) along the bottom, play clockwise;
- both slides of every side in their owner's colour (triangle, bar, end disc);
- each colour's safety zone (five squares) running inward to its Home circle;
- the Start and Home circles, each with its pawn count and its pawns as labelled discs;
- every pawn in its colour with its label (``1`` .. ``4``; see :mod:`sorry_env.board.narrate` for
  labels that stay with a pawn through a game; without a tracker pawns are numbered by slot);
- in the middle: the card in play, whose turn it is (the mover's Start circle is outlined
  too), the turn number, a draw-again note, the winner when the game is over; an optional
  caption (the last move, in replays);
- team rules: the two partnerships, and each circle tagged with its team letter;
- play for points: the hand of the player to move (the one whose decision the picture is
  about; hands are otherwise hidden information).

Only Pillow's built-in font is used (no font files, nothing downloaded).
"""

from __future__ import annotations

import functools

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from ..checks import is_integer
from . import engine as E
from .board_layout import (
    GRID,
    HOME_RADIUS,
    START_RADIUS,
    home_centre,
    safe_cell,
    slide_squares,
    slides,
    start_centre,
    track_cell,
)
from .geometry import HOME, N_SEATS, SAFE0, SAFE_LEN, SIDE, START, START_CIRCLE, TRACK
from .render import COLOUR_NAMES, hand_text, token_text
from .rules import CARD_NAMES, get_rules

# Seat colours (Red, Blue, Yellow, Green), their light tints, and the board's own colours.
INK = ((200, 35, 35), (35, 85, 200), (225, 180, 20), (30, 140, 60))
TINT = ((245, 200, 200), (200, 215, 245), (250, 238, 180), (200, 235, 205))
BOARD = (240, 234, 214)
SQUARE = (255, 255, 250)
LINE = (90, 90, 90)
TEXT = (30, 30, 30)
FIRE_RING, ICE_RING = (245, 120, 0), (120, 200, 255)  # Fire and Ice: rings round the token's pawn
DEFAULT_SIZE = 640


@functools.lru_cache(maxsize=16)
def _font(px: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    try:
        return ImageFont.load_default(size=px)
    except TypeError:  # Pillow without FreeType: the fixed bitmap font
        return ImageFont.load_default()


def _slot_numbers(labels, seat: int, ppp: int) -> list:
    return labels.numbers[seat] if labels is not None else list(range(1, ppp + 1))


def draw_board(state, rules, labels=None, caption: str | None = None, size: int = DEFAULT_SIZE) -> Image.Image:
    """The position `state` under `rules` as an RGB image (see the module docstring).
    `labels`: a :class:`sorry_env.board.narrate.PawnLabels` following the game."""
    rules = get_rules(rules)
    if not is_integer(size) or size < 160:
        raise ValueError(f"size must be an integer of at least 160 pixels, got {size!r}")
    ppp = rules.pawns_per_player
    cell = size / GRID
    active = tuple(s for s in range(N_SEATS) if state[E.ACTIVE + s])
    teams = rules.teams != "none"
    img = _background(size, active, teams).copy()
    d = ImageDraw.Draw(img)
    small, medium, large = _fonts(cell)
    to_move = int(state[E.TO_MOVE])
    if state[E.WINNER] < 0:  # whose turn: a thick ring round the mover's Start circle
        x, y = start_centre(to_move)
        _circle(d, (x * cell, y * cell), START_RADIUS * cell, outline=INK[to_move], width=4)
    # Pawns: on squares, and in their circles.
    pawn_r = cell * 0.36
    for seat in active:
        numbers = _slot_numbers(labels, seat, ppp)
        in_start, at_home = [], []
        for i in range(ppp):
            code = int(state[E.PAWNS + seat * E.MAX_SLOTS + i])
            if code == START:
                in_start.append(numbers[i])
            elif code == HOME:
                at_home.append(numbers[i])
            else:
                col, row = track_cell(code) if code < TRACK else safe_cell(seat, code - SAFE0)
                x, y = (col + 0.5) * cell, (row + 0.5) * cell
                # Fire and Ice: a ring round the pawn holding the token (orange Fire, pale blue Ice).
                for token, ring in ((E.fire_pawn(state), FIRE_RING), (E.ice_pawn(state), ICE_RING)):
                    if (int(token[0]), int(token[1])) == (seat, i):
                        r = pawn_r * (1.35 if ring is FIRE_RING else 1.18)
                        _circle(d, (x, y), r, outline=ring, width=max(2, int(cell * 0.08)))
                _pawn(d, (x, y), pawn_r, seat, numbers[i], medium)
        for (x, y), group, radius in (
            (start_centre(seat), in_start, START_RADIUS),
            (home_centre(seat), at_home, HOME_RADIUS),
        ):
            r_small = cell * 0.24
            for k, number in enumerate(sorted(group)):
                offset = (k - (len(group) - 1) / 2) * r_small * 2.1
                _pawn(d, (x * cell + offset, (y + 0.05) * cell), r_small, seat, number, small)
            _centred(d, (x * cell, (y + radius * 0.6) * cell), str(len(group)), medium)
    # The caption's word boxes, for checks that it stays clear of the circles (tests/test_draw.py).
    img.info["caption_boxes"] = _centre_panel(d, state, rules, cell, (small, medium, large), caption, labels)
    return img


def _fonts(cell: float) -> tuple:
    return _font(max(8, int(cell * 0.28))), _font(max(9, int(cell * 0.38))), _font(int(cell * 0.9))


@functools.lru_cache(maxsize=32)
def _background(size: int, active: tuple, teams: bool) -> Image.Image:
    """Everything that does not change during a game: squares, slides, safety zones, circles.
    Drawn once per (size, seats, teams) and copied for every picture."""
    cell = size / GRID
    img = Image.new("RGB", (size, size), BOARD)
    d = ImageDraw.Draw(img)
    small, medium, _ = _fonts(cell)

    def box(col, row, inset=0.0):
        return [col * cell + inset, row * cell + inset, (col + 1) * cell - inset, (row + 1) * cell - inset]

    def centre(col, row):
        return ((col + 0.5) * cell, (row + 0.5) * cell)

    # Track squares, numbered where a reader needs a landmark.
    landmarks = {0, 5, 10} | {int(s) for s in START_CIRCLE}
    for sq in range(TRACK):
        col, row = track_cell(sq)
        d.rectangle(box(col, row, 1), fill=SQUARE, outline=LINE)
        if sq % SIDE in landmarks or sq % 5 == 0:
            d.text((col * cell + 3, row * cell + 2), str(sq), fill=(120, 120, 120), font=small)
    # Slides: a bar in the owner's colour from the triangle to the end disc.
    for owner, first, last in slides():
        squares = slide_squares(first, last)
        a, b = centre(*track_cell(squares[0])), centre(*track_cell(squares[-1]))
        d.line([a, b], fill=INK[owner], width=max(2, int(cell * 0.18)))
        _circle(d, b, cell * 0.16, fill=INK[owner], outline=INK[owner])
        # the triangle points along the direction of play
        dx, dy = np.sign(b[0] - a[0]), np.sign(b[1] - a[1])
        h, w = cell * 0.3, cell * 0.25
        tip = (a[0] + dx * h, a[1] + dy * h)
        d.polygon(
            [
                tip,
                (a[0] - dx * h / 2 - dy * w, a[1] - dy * h / 2 + dx * w),
                (a[0] - dx * h / 2 + dy * w, a[1] - dy * h / 2 - dx * w),
            ],
            fill=INK[owner],
        )
    # Safety zones, Start and Home circles (drawn for every colour; empty seats faded).
    for seat in range(N_SEATS):
        playing = seat in active
        tint = TINT[seat] if playing else (225, 222, 210)
        for k in range(SAFE_LEN):
            d.rectangle(box(*safe_cell(seat, k), 1), fill=tint, outline=INK[seat] if playing else LINE)
        for name, (x, y), radius in (
            ("START", start_centre(seat), START_RADIUS),
            ("HOME", home_centre(seat), HOME_RADIUS),
        ):
            _circle(d, (x * cell, y * cell), radius * cell, fill=tint, outline=INK[seat] if playing else LINE, width=2)
            _centred(d, (x * cell, (y - radius * 0.62) * cell), name, small)
            if teams and playing:  # each circle tagged with its partnership
                _centred(
                    d,
                    ((x + radius * 0.75) * cell, (y - radius * 0.75) * cell),
                    "A" if seat % 2 == 0 else "B",
                    medium,
                    INK[seat],
                )
    return img


def _circle(d, xy, radius, **style) -> None:
    """A circle of `radius` round the point `xy` (`style`: Pillow's fill, outline, width)."""
    x, y = xy
    d.ellipse([x - radius, y - radius, x + radius, y + radius], **style)


def _pawn(d, xy, radius, seat, number, font):
    _circle(d, xy, radius, fill=INK[seat], outline=(20, 20, 20), width=2)
    ink = (20, 20, 20) if seat == 2 else (255, 255, 255)  # dark text on yellow
    _centred(d, xy, str(number), font, ink)


def _centred(d, xy, text: str, font, fill=TEXT) -> None:
    """`text` centred on the point `xy`."""
    d.text(xy, text, fill=fill, font=font, anchor="mm")


def _centre_panel(d, state, rules, cell, fonts, caption, labels=None):
    small, medium, large = fonts
    mid = GRID / 2 * cell
    to_move = int(state[E.TO_MOVE])
    winner = int(state[E.WINNER])
    card = int(state[E.CARD])
    top = mid - cell * 3.0
    if rules.hand_size:
        # Play for points: the mover's hand as a row of cards (the picture of its decision).
        cards = hand_text(state, to_move).split() if winner < 0 else []
        w, h, gap = cell * 1.15, cell * 1.6, cell * 0.15
        left = mid - (len(cards) * (w + gap) - gap) / 2
        _centred(d, (mid, top + cell * 0.6), f"{COLOUR_NAMES[to_move]}'s hand" if cards else "", small)
        for k, name in enumerate(cards):
            x = left + k * (w + gap)
            d.rounded_rectangle(
                [x, top + cell, x + w, top + cell + h],
                radius=cell * 0.15,
                fill=(255, 255, 255),
                outline=INK[to_move],
                width=2,
            )
            _centred(d, (x + w / 2, top + cell + h / 2), name, medium)
        h = cell * 2.8
    else:
        # The card in play: a white card with its name ("-" at a chance node: no card drawn).
        w, h = cell * 2.0, cell * 2.8
        d.rounded_rectangle(
            [mid - w / 2, top, mid + w / 2, top + h],
            radius=cell * 0.25,
            fill=(255, 255, 255),
            outline=INK[to_move],
            width=3,
        )
        name = CARD_NAMES[card] if card >= 0 else "-"
        _centred(d, (mid, top + h / 2), name, large if len(name) <= 2 else medium)
    y = top + h + cell * 0.45
    if winner >= 0:
        side = (
            f"{COLOUR_NAMES[winner]} + {COLOUR_NAMES[(winner + 2) % 4]}"
            if rules.teams != "none"
            else COLOUR_NAMES[winner]
        )
        _centred(d, (mid, y), f"{side} wins", medium, INK[winner])
    else:
        again = " (draw again)" if state[E.DRAW_AGAIN] else ""
        _centred(d, (mid, y), f"{COLOUR_NAMES[to_move]} to play{again}", medium, INK[to_move])
    y += cell * 0.5
    _centred(d, (mid, y), f"turn {int(state[E.TURN])}  ·  {rules.name}", small)
    if rules.teams != "none":
        y += cell * 0.45
        _centred(d, (mid, y), "teams: A = Red + Yellow,  B = Blue + Green", small)
    if rules.fire_ice:
        y += cell * 0.45
        pending = "  ·  fire decision" if state[E.FIRE_PENDING] else ""
        _centred(d, (mid, y), token_text(state, labels) + pending, small)
    if caption:
        return _wrapped(d, caption, mid, y + cell * 0.6, caption_width(cell), small)
    return []


def caption_width(cell: float) -> float:
    """Widest a caption line may be, in pixels: the gap between the Home circles left and right
    of the centre panel (Red's and Yellow's), less a margin, so the text never runs into one."""
    left_x = min(home_centre(seat)[0] for seat in range(4)) + HOME_RADIUS
    right_x = max(home_centre(seat)[0] for seat in range(4)) - HOME_RADIUS
    half = min(right_x - GRID / 2, GRID / 2 - left_x) - 0.3
    return 2 * half * cell


def _wrapped(d, text, x_mid, y, width, font) -> list[tuple[float, float, float, float]]:
    """Centred text broken into lines no wider than `width` pixels, the words drawn one by one
    with a gap of about half the font size: the built-in font's own space is so narrow
    that "square 44 to square 46" reads as "square 44to square 46". Returns each word's box."""
    size = getattr(font, "size", 11)
    gap = max(4.0, size * 0.45)
    lines: list[list[str]] = [[]]
    for word in text.split():
        trial = lines[-1] + [word]
        if lines[-1] and _line_width(d, trial, font, gap) > width:
            lines.append([word])
        else:
            lines[-1] = trial
    boxes = []
    for line in lines:
        x = x_mid - _line_width(d, line, font, gap) / 2
        for word in line:
            d.text((x, y), word, fill=TEXT, font=font, anchor="la")
            boxes.append(d.textbbox((x, y), word, font=font, anchor="la"))
            x += d.textlength(word, font=font) + gap
        y += size * 1.3
    return boxes


def _line_width(d, words, font, gap) -> float:
    return sum(d.textlength(word, font=font) for word in words) + gap * max(0, len(words) - 1)


def board_array(state, rules, labels=None, caption: str | None = None, size: int = DEFAULT_SIZE) -> np.ndarray:
    """:func:`draw_board` as a ``uint8[size, size, 3]`` array (``render_mode="rgb_array"``)."""
    return np.asarray(draw_board(state, rules, labels, caption, size), dtype=np.uint8)
