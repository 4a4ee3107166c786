"""Observation vector: every public fact, seen from one seat (compiled, built in place).

Player slots are the viewing seat first, then the other seats in turn order. Track squares
are rotated into the viewer's frame (the viewer's own side is side 0), so the same position
looks the same from every seat. Layout (float32, all values in [0, 1]):

=============  =====================================================================
index range    content
=============  =====================================================================
0..1071        pawn one-hots: player slot p (0..3), pawn slot i (0..3, canonical
               order), 67 codes each, at ``(p*4 + i)*67 + code``; code 0..59 is the
               track square in the viewer's frame, 60..64 safe 0..4 of that pawn's own
               colour, 65 Home, 66 Start. All zero for an empty slot.
1072..1087     seat offset of player slot p: one-hot ``(seat - viewer) mod 4`` at
               ``1072 + p*4 + offset`` (all zero if the slot is empty)
1088..1098     card to play, one-hot over CARD_NAMES (all zero: none drawn)
1099           1 if that card is the draw-again of a 2
1100..1110     cards of each kind left in the draw pile / 5; with hands (play for
               points): cards the viewer has not seen (draw pile + other hands) / 5
1111..1126     progress of each pawn: steps to Home / 66 (0 = Home, 1 = Start), at
               ``1111 + p*4 + i`` (0 for empty slots)
1127..1130     1 if player slot p is on the viewer's team (team rules; slot 0 always 1)
1131..1141     the viewer's own hand (play for points): copies of each card / 5
1142           Hasbro 2003 teams: steps of a split seven still to move / 7
1143..1150     ... and 1 for each movable pawn slot that already moved in it
1151..1166     Fire and Ice: 1 at ``1151 + p*4 + i`` for the pawn holding Fire (all
               zero: Fire in the middle)
1167..1182     ... 1 at ``1167 + p*4 + i`` for the iced pawn (all zero: Ice in the middle)
1183           1 if the player to move is deciding on a fire move (before the draw)
=============  =====================================================================

The global state (the env's ``state()``, ``GLOBAL_STATE_SIZE`` = 1233 floats in [0, 1]) is
the observation above of the first seat in play (0..1183; its frame), then 1184..1187 a
one-hot of the seat to move (absolute seat number), 1188..1231 every seat's hand (seat s,
card c at ``1188 + s*11 + c``, copies / 5; all zero without hands), and 1232 the cards played
/ ``max_turns`` (0 without a turn limit). Only the draw-pile order is left out: the future.
"""

from numba import njit

from . import engine as E
from .geometry import N_CODES, N_SEATS, SIDE, STEPS_TO_HOME, TRACK
from .rules import N_CARDS, R_PAWNS

PAWN_BASE = 0
OFFSET_BASE = 16 * N_CODES
CARD_BASE = OFFSET_BASE + 16
DRAW_AGAIN_INDEX = CARD_BASE + N_CARDS
REMAIN_BASE = DRAW_AGAIN_INDEX + 1
PROGRESS_BASE = REMAIN_BASE + N_CARDS
TEAM_BASE = PROGRESS_BASE + 16
HAND_BASE = TEAM_BASE + 4
SEVEN_LEFT_INDEX = HAND_BASE + N_CARDS
SEVEN_MOVED_BASE = SEVEN_LEFT_INDEX + 1
FIRE_BASE = SEVEN_MOVED_BASE + 8
ICE_BASE = FIRE_BASE + 16
FIRE_DECISION_INDEX = ICE_BASE + 16
OBS_SIZE = FIRE_DECISION_INDEX + 1


@njit(cache=True)
def observe(state, rules, viewer, out):
    """Write the observation of `viewer` (a seat) into `out` (float32, OBS_SIZE)."""
    out[:] = 0.0
    ppp = rules[R_PAWNS]
    seat = viewer
    for p in range(4):
        if p > 0:
            seat = E.other_seat(state, viewer, p)
            if seat < 0:
                break
        out[OFFSET_BASE + p * 4 + (seat - viewer) % 4] = 1.0
        if E.same_side(rules, viewer, seat):
            out[TEAM_BASE + p] = 1.0
        for i in range(ppp):
            code = state[E.PAWNS + seat * E.MAX_SLOTS + i]
            shown = (code - SIDE * viewer) % TRACK if code < TRACK else code
            out[PAWN_BASE + (p * 4 + i) * N_CODES + shown] = 1.0
            out[PROGRESS_BASE + p * 4 + i] = STEPS_TO_HOME[seat, code] / 66.0
            if state[E.FIRE] == seat * E.MAX_SLOTS + i + 1:
                out[FIRE_BASE + p * 4 + i] = 1.0
            if code == state[E.ICE] - 1:
                out[ICE_BASE + p * 4 + i] = 1.0
    out[FIRE_DECISION_INDEX] = state[E.FIRE_PENDING]
    out[SEVEN_LEFT_INDEX] = state[E.SEVEN_LEFT] / 7.0
    for i in range(8):
        out[SEVEN_MOVED_BASE + i] = (state[E.SEVEN_MOVED] >> i) & 1
    card = state[E.CARD]
    if card >= 0:
        out[CARD_BASE + card] = 1.0
    out[DRAW_AGAIN_INDEX] = state[E.DRAW_AGAIN]
    for c in range(N_CARDS):
        unseen = state[E.REMAIN + c]
        # Hands are private: others' hands count as unseen, the viewer's own are shown.
        for seat in range(N_SEATS):
            if seat != viewer:
                unseen += state[E.HANDS + seat * N_CARDS + c]
        out[REMAIN_BASE + c] = unseen / 5.0
        out[HAND_BASE + c] = state[E.HANDS + viewer * N_CARDS + c] / 5.0


# ---- the global state (PettingZoo's state(), for centralized critics) -------------------------
# The observation of the first seat in play (its frame: seat 0's unless seat 0 is empty), then
# what no single observation holds: the seat to move, every hand, and the turn count.
STATE_TO_MOVE_BASE = OBS_SIZE  # one-hot over the four seats (absolute seat numbers)
STATE_HANDS_BASE = STATE_TO_MOVE_BASE + 4  # seat s, card c: copies in s's hand / 5 at base + s*N_CARDS + c
STATE_TURN_INDEX = STATE_HANDS_BASE + 4 * N_CARDS  # cards played / max_turns (0 without a limit)
GLOBAL_STATE_SIZE = STATE_TURN_INDEX + 1


def global_state(state, rules, max_turns, out) -> None:
    """Write the full game state as floats in [0, 1] into `out` (float32, GLOBAL_STATE_SIZE):
    everything any player knows, every hand included. Only the order of the draw pile and the
    generator are left out: they are the future draws, which no player can know."""
    first = 0
    while state[E.ACTIVE + first] == 0:
        first += 1
    observe(state, rules, first, out[:OBS_SIZE])
    out[OBS_SIZE:] = 0.0
    out[STATE_TO_MOVE_BASE + state[E.TO_MOVE]] = 1.0
    out[STATE_HANDS_BASE:STATE_TURN_INDEX] = state[E.HANDS : E.HANDS + 4 * N_CARDS] / 5.0
    if max_turns is not None:
        out[STATE_TURN_INDEX] = min(state[E.TURN] / max_turns, 1.0)
