"""What a move did, in words, and pawn labels that stay the same through a game.

The engine keeps each seat's pawns sorted (most advanced first), so a pawn's slot is not its
identity: after a move the same slot may hold another pawn. :class:`PawnLabels` follows every
pawn through a game and gives it a fixed label: the seat's colour letter and a number,
``R1`` .. ``R4`` for Red (3-pawn rules: 1..3). At the start of a game (or of a loaded
position) the numbers go in slot order, so ``R1`` is the most advanced pawn; from then on a
pawn keeps its number wherever it goes, Start and Home included. A pawn leaving Start is the
one with the lowest number there.

How pawns are followed: :func:`trace_move` has the engine carry the move out on a copy and
record what happened pawn by pawn (:func:`sorry_env.board.engine.apply_move_events`: each pawn's
movement, bumps, slides and the pawns they swept, in the slots the pawns had before the move),
so the rules live in the engine alone. The trace then matches the pawns to the slots of the
state after the move. If that state is not what the action leads to (a caller's mistake),
the trace falls back to matching pawns by the least movement and says so
(``Move.consistent`` is False), rather than tell a wrong story.

:func:`narrate` turns a move into one sentence naming its consequences: which pawn moved where,
slides (and who was swept off the slide), bumps (whose pawn went back to Start), pawns
reaching Home, swaps and Sorry! cards. Square numbers are the track numbers the ANSI board
prints round its edge; ``Red safe 2`` is square 2 of Red's safety zone (0 nearest the entry).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from . import engine as E
from . import game
from .geometry import HOME, N_SEATS, SAFE0, SLIDE_OWNER, START, STEPS_TO_HOME, TRACK
from .render import COLOUR_NAMES
from .render import COLOURS as COLOUR_LETTERS
from .rules import CARD_NAMES, get_rules

Pawn = tuple  # (seat, slot in the state BEFORE the move)


@dataclasses.dataclass
class Step:
    """One pawn's own movement within a move, and what it caused."""

    pawn: Pawn
    kind: str  # "start", "move", "swap", "sorry" or "fire" (a fire move: Fire and Ice)
    src: int  # pawn code before (sorry_env.board.geometry codes)
    dst: int  # pawn code after, slide included
    n: int = 0  # kind "move": squares moved (negative: backward)
    slide: tuple | None = None  # (triangle, end) if the pawn slid
    bumped: list = dataclasses.field(default_factory=list)  # pawns sent to Start by the landing
    swept: list = dataclasses.field(default_factory=list)  # pawns sent to Start by the slide

    @property
    def landing(self) -> int:
        """The square the pawn landed on: the slide's triangle if it slid, else its end."""
        return self.slide[0] if self.slide else self.dst


@dataclasses.dataclass
class Move:
    """The pawn-by-pawn account of one action (see :func:`trace_move`)."""

    seat: int  # the player who acted
    kind: str  # game.decode_action's kind
    card: int | None  # card index played (None: a discard or no card)
    steps: list  # Steps in the order they happened
    after_slot: dict  # (seat, slot before) -> slot after, for every pawn in play
    consistent: bool  # False: the board-table replay disagreed with the engine (see module doc)


def pawn_codes(state, rules) -> list:
    """Each seat's pawn codes in slot order ([] for an empty seat)."""
    ppp = get_rules(rules).pawns_per_player
    codes = state[E.PAWNS : E.PAWNS + 4 * E.MAX_SLOTS].reshape(4, E.MAX_SLOTS)[:, :ppp].tolist()
    return [codes[s] if state[E.ACTIVE + s] else [] for s in range(N_SEATS)]


def where(seat: int, code: int) -> str:
    """A pawn code in words: ``square 12``, ``Red safe 2``, ``Start``, ``Home``."""
    if code == START:
        return "Start"
    if code == HOME:
        return "Home"
    if code >= SAFE0:
        return f"{COLOUR_NAMES[seat]} safe {code - SAFE0}"
    return f"square {code}"


def trace_move(before, rules, action, after, labels: list | None = None) -> Move:
    """Follow every pawn through `action` from `before` to the engine's `after`.

    `labels` (per seat, a number per slot of `before`) only decides which pawn leaves a Start
    holding several: the lowest-numbered one."""
    rules = get_rules(rules)
    r = game.rules_array(rules)
    me = int(before[E.TO_MOVE])
    kind, i, j, first, _ = game.decode_action(rules, action)
    fire_decision = kind in ("fire_move", "no_fire_move")
    card = None if kind == "discard" or fire_decision else game.action_card(before, rules, action)
    # The engine carries the move out on a copy and says what happened, pawn by pawn, in the
    # slots of `before` (its state after the move is re-sorted, so the pawns are followed
    # through the events instead).
    events = E.event_buffer()
    E.apply_move_events(np.array(before, dtype=np.int64), r, action, events)
    records = events[1 : 1 + E.EVENT_SIZE * int(events[0])].reshape(-1, E.EVENT_SIZE).tolist()
    pos = pawn_codes(before, rules)
    # Which of several pawns in Start leaves is the labels' choice (the lowest number), not
    # the engine's (the last such slot): the pawns there are alike, so the two are exchanged.
    renamed = {}
    for ev, seat, slot, src, _ in records:
        if ev == E.EV_PLACE and src == START and labels is not None:
            chosen = min((k for k, code in enumerate(pos[seat]) if code == START), key=labels[seat].__getitem__)
            renamed = {(seat, slot): (seat, chosen), (seat, chosen): (seat, slot)}
    # Each movement a step; a bump belongs to the step just placed, a sweep to the last slide.
    step_kind = {"start": "start", "swap": "swap", "sorry": "sorry", "fire_move": "fire"}.get(kind, "move")
    distances = {"back1": [-1], "seven_part": [first], "split": [first, 7 - first]}
    if kind == "move":
        distances["move"] = [int(E.CARD_STEP[card]) if card != CARD_NAMES.index("SORRY") else rules.sorry_forward]
    distance = iter(distances.get(kind, []))
    steps: list[Step] = []
    placed: Step | None = None
    slid: Step | None = None
    for ev, seat, slot, a, b in records:
        pawn = renamed.get((seat, slot), (seat, slot))
        pos[pawn[0]][pawn[1]] = START if ev in (E.EV_BUMP, E.EV_SWEEP) else b
        if ev == E.EV_PLACE:
            n = (b - a) % TRACK if kind == "fire_move" else next(distance, 0)
            placed = Step(pawn, step_kind, a, b, n)
            steps.append(placed)
        elif ev == E.EV_BUMP:
            assert placed is not None  # the engine reports a bump after the move that made it
            placed.bumped.append(pawn)
        elif ev == E.EV_SLIDE:
            slid = next(step for step in reversed(steps) if step.pawn == pawn)
            slid.slide, slid.dst = (a, b), b
        else:  # EV_SWEEP
            assert slid is not None  # the engine reports a sweep after the slide that made it
            slid.swept.append(pawn)

    after_codes = pawn_codes(after, rules)
    consistent = all(sorted(pos[s]) == sorted(codes) for s, codes in enumerate(after_codes))
    after_slot = _match(pos if consistent else pawn_codes(before, rules), after_codes, labels)
    return Move(me, kind, card, steps, after_slot, consistent)


def _match(predicted, after, labels) -> dict:
    """(seat, slot before) -> slot after. Predicted codes equal to an after code are matched
    first (pawns sharing Start or Home in label order); anything left (only when the
    prediction failed) goes to the nearest code left."""
    mapping = {}
    for seat, codes in enumerate(after):
        slots_of: dict = {}
        for a, code in enumerate(codes):
            slots_of.setdefault(code, []).append(a)
        # label order: pawns sharing Start or Home take their slots lowest label first
        order = sorted(range(len(codes)), key=labels[seat].__getitem__) if labels else range(len(codes))
        left = []
        for k in order:
            free_here = slots_of.get(predicted[seat][k])
            if free_here:
                mapping[(seat, k)] = free_here.pop(0)
            else:
                left.append(k)
        free = [a for rest in slots_of.values() for a in rest]
        for k in left:
            old = int(STEPS_TO_HOME[seat, predicted[seat][k]])
            slot = min(free, key=lambda a: abs(int(STEPS_TO_HOME[seat, codes[a]]) - old))
            free.remove(slot)
            mapping[(seat, k)] = slot
    return mapping


class PawnLabels:
    """Stable pawn labels through one game (see the module docstring for how they are chosen).

    ``labels = PawnLabels(state, rules)`` at the start; ``move = labels.advance(before, action,
    after)`` after every action; ``labels.label(seat, slot)`` names the pawn in a slot of the
    CURRENT state."""

    def __init__(self, state, rules):
        self.rules = get_rules(rules)
        self.numbers = [list(range(1, len(codes) + 1)) for codes in pawn_codes(state, self.rules)]

    def label(self, seat: int, slot: int) -> str:
        return _label((seat, slot), self.numbers)

    def seat_labels(self, seat: int) -> list:
        """Labels of a seat's slots, in slot order."""
        return [self.label(seat, k) for k in range(len(self.numbers[seat]))]

    def advance(self, before, action, after) -> Move:
        """Follow `action` from `before` to `after`; returns its trace (labels as they were
        before the move are in ``self.previous``)."""
        move = trace_move(before, self.rules, action, after, self.numbers)
        self.previous = [row[:] for row in self.numbers]
        numbers = [[0] * len(row) for row in self.numbers]
        for (seat, slot), new_slot in move.after_slot.items():
            numbers[seat][new_slot] = self.numbers[seat][slot]
        self.numbers = numbers
        return move

    def copy(self) -> PawnLabels:
        other = PawnLabels.__new__(PawnLabels)
        other.rules, other.numbers = self.rules, [row[:] for row in self.numbers]
        return other


def _names(pawns, numbers) -> str:
    names = [f"{COLOUR_NAMES[pawn[0]]}'s {_label(pawn, numbers)}" for pawn in pawns]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def narrate(before, rules, action, move: Move, numbers: list) -> str:
    """One sentence for `move` (from :func:`trace_move`), pawns named by `numbers` (per seat,
    the label number of each slot of `before`, e.g. ``PawnLabels.previous``)."""
    card, body = _account(before, rules, action, move, numbers)
    who = COLOUR_NAMES[move.seat]
    if move.kind == "discard":
        return f"{who} {body}."
    return f"{who} plays {card}: {body}." if card is not None else f"{who}: {body}."


def option_text(before, rules, action, labels: PawnLabels) -> str:
    """A legal action of the player to move in words, consequences included, before it is
    chosen (for the play command's list): ``R1 moves 5 forward from square 10 to square 15,
    bumping Blue's B2 back to Start``; with hands the card comes first (``play 5: ...``)."""
    rules = get_rules(rules)
    after = game.after_move(before, rules, action)
    move = trace_move(before, rules, action, after, labels.numbers)
    card, body = _account(before, rules, action, move, labels.numbers)
    return f"play {card}: {body}" if rules.hand_size and card is not None and move.kind != "discard" else body


def _account(before, rules, action, move: Move, numbers: list) -> tuple:
    """(card name or None, what happened without the player's name)."""
    rules = get_rules(rules)
    card = CARD_NAMES[move.card] if move.card is not None else None
    if move.kind == "discard":
        return None, f"discards a {CARD_NAMES[game.decode_action(rules, action)[1]]} (no card in the hand can move)"
    if move.kind == "pass":
        return card, "declines to swap and passes" if card == "11" else "no legal move, passes"
    if move.kind == "no_fire_move":
        return None, "makes no fire move"
    if not move.consistent:
        return card, f"{game.describe_action(before, rules, action)} (pawn tracking lost: see the board)"

    parts = [text for text in (_step_text(step, move, numbers) for step in move.steps) if text is not None]
    text = "; ".join(parts) if parts else game.describe_action(before, rules, action)
    token = _token_text(before, rules, action, numbers)
    if token:
        text = f"{token}, then {text}"
    if move.kind == "seven_part":  # Hasbro 2003 teams: a seven split among pawns, one part at a time
        left = (int(before[E.SEVEN_LEFT]) or 7) - game.decode_action(rules, action)[3]
        text += f" ({left} of the 7 still to move)" if left else " (the 7 is finished)"
    return card, text


def _label(pawn, numbers) -> str:
    """A pawn's short label, e.g. ``R1``."""
    return f"{COLOUR_LETTERS[pawn[0]]}{numbers[pawn[0]][pawn[1]]}"


def _step_text(step: Step, move: Move, numbers: list) -> str | None:
    """One step of a move in words, what it slid over and bumped included (None: a step that
    says nothing, the second pawn of a swap that did not slide)."""
    if step.kind == "swap" and step is move.steps[1] and not step.slide:
        return None
    seat = step.pawn[0]
    owner = "" if seat == move.seat else f"partner {COLOUR_NAMES[seat]}'s "
    label = _label(step.pawn, numbers)
    if step.kind == "start":
        text = f"{owner}{label} leaves Start onto square {step.landing}"
    elif step.kind == "sorry":
        text = f"{owner}{label} leaves Start and takes square {step.landing}"
        if step.bumped:  # the pawn it replaced is named here, not as a bump
            text += f", sending {_names([step.bumped[0]], numbers)} back to Start"
            step = dataclasses.replace(step, bumped=step.bumped[1:])
    elif step.kind == "fire":
        text = f"{label} makes a fire move from {where(seat, step.src)} to square {step.landing}"
    elif step.kind == "swap":
        if step is move.steps[1]:  # the other pawn, after the swap, sliding
            text = label
        else:
            other = move.steps[1]
            text = (
                f"{label} on {where(seat, step.src)} swaps places with "
                f"{_names([other.pawn], numbers)} on {where(other.pawn[0], other.src)}"
            )
    else:
        text = _walk_text(step, owner + label)
    if step.slide:
        tri, end = step.slide
        text += f"{',' if text != label else ''} lands on {COLOUR_NAMES[int(SLIDE_OWNER[tri])]}'s slide "
        text += f"at square {tri} and slides to square {end}"
        if step.swept:
            text += f", sweeping {_names(step.swept, numbers)} back to Start"
    if step.bumped:
        text += f", bumping {_names(step.bumped, numbers)} back to Start"
    return text


def _walk_text(step: Step, who: str) -> str:
    """A pawn moving forward or back (before any slide)."""
    seat = step.pawn[0]
    direction = f"{step.n} forward" if step.n > 0 else f"{-step.n} back"
    if step.dst == HOME:
        return f"{who} moves {direction} from {where(seat, step.src)} and reaches Home"
    text = f"{who} moves {direction} from {where(seat, step.src)} to {where(seat, step.landing)}"
    if step.src < TRACK and SAFE0 <= step.dst < HOME:
        text += " (into the safety zone)"
    return text


def _token_text(before, rules, action, numbers) -> str:
    """Fire and Ice: what the action's token choice did, or "" (see game.action_token)."""
    if not rules.fire_ice or int(before[E.CARD]) not in (0, 1) or E.fire_decision_pending(before):
        return ""
    k = game.action_token(rules, action)
    r = game.rules_array(rules)
    me = int(before[E.TO_MOVE])
    if int(before[E.CARD]) == 0:
        if not k:
            return "Ice goes to the middle (no opponent pawn on the track)"
        token = "Ice"
        seat, slot = (int(x) for x in E.target_pawn(before, r, me, k - 1))
    elif not k:
        return ""
    else:
        token, seat, slot = "Fire", me, k - 1
    code = int(before[E.PAWNS + seat * E.MAX_SLOTS + slot])
    return f"moves {token} onto {_names([(seat, slot)], numbers)} on {where(seat, code)}"


def describe_move(before, rules, action, after, labels: PawnLabels | None = None) -> str:
    """Follow and narrate one move; advances `labels` if given (else labels by slot order)."""
    labels = labels if labels is not None else PawnLabels(before, rules)
    move = labels.advance(before, action, after)
    return narrate(before, rules, action, move, labels.previous)
