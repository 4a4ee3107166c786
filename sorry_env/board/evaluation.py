"""Position evaluation shared by the heuristic, expectimax and Monte Carlo agents.

A position is scored per seat as an *equity* in units of "steps of progress": each pawn's
progress towards Home, bonuses for being out of Start, in the safety zone and Home, minus the
expected loss from being bumped before its owner moves again, plus the option value of a
backward 4 / 10 that would carry a pawn behind its own safety entry. A seat's score is its
equity minus a blend of the leading opponent's equity and the opponents' mean, so bumping the
leader is worth more than bumping a trailing player. Under team rules a seat's score is its
side's equity minus the other side's, and only the other side threatens its pawns.

Legality is never decided here: moves are generated and applied by the engine. The threat
map below is an *estimate* of which next cards could bring an opponent onto a square, read
from the engine's movement tables; it ignores whether the opponent's own pawns would block.

Every tunable number is a field of :class:`Weights` (the one place they live).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sorry_env.board import engine as E
from sorry_env.board.geometry import (
    BACKWARD,
    FORWARD,
    HOME,
    N_SEATS,
    SAFE0,
    SLIDE_END,
    SLIDE_OWNER,
    START,
    START_CIRCLE,
    STEPS_TO_HOME,
    TRACK,
)
from sorry_env.board.rules import (
    C4,
    C7,
    C10,
    CSORRY,
    N_CARDS,
    R_PAWNS,
    R_SORRY_FORWARD,
    R_START_CARDS,
    R_TEAMS,
)

from .simulate import card_chances

FULL_PROGRESS = 65  # steps from Start to Home: 1 onto the circle, then 64


@dataclasses.dataclass(frozen=True)
class Weights:
    """Weights of the position evaluation: the heuristic's move choice, the expectimax leaves
    and the Monte Carlo playouts all use them. Units: one step of progress of one pawn = 1."""

    # Value of one step of progress of one pawn (the unit the other weights are set in).
    progress: float = 1.0
    # Extra value of a pawn out of Start: it no longer needs a 1, a 2 or a Sorry! to enter.
    out_of_start: float = 6.0
    # Extra value of a pawn in the safety zone (no bumps, no swaps, no Sorry!).
    safe: float = 8.0
    # Extra value of a pawn Home (finished; also frees the other pawns' cards).
    home: float = 10.0
    # Multiplier on the expected loss of a pawn that opponents can bump before it moves.
    danger: float = 1.0
    # Threats from a seat that moves only after the threatened seat count this much: the
    # threatened player may move away first (and the position will have changed).
    late_threat: float = 0.5
    # Per-opponent chance (added to the next-card threat) that a pawn standing in the 12
    # squares in front of an opponent's start circle is hit by a pawn that opponent brings out
    # of Start; only while that opponent has pawns in Start.
    start_zone: float = 0.04
    # Penalty for an own pawn on the own start circle while pawns wait in Start (it blocks
    # the 1 and the 2 from bringing them out).
    blocked_circle: float = 3.0
    # Multiple of the next card's expected gain from a backward 4 / 10-back-1 into the
    # safety shortcut (a pawn just past its own circle) that counts as value now; above 1
    # because the chance lasts for several turns (tuned: 1.0 and 1.5 each won 51% of 16,000
    # heuristic-vs-heuristic games against the previous value, 2.0 did not).
    backward_option: float = 1.5
    # Weight of the leading opponent in a seat's score; the rest goes to the opponents' mean
    # (the rule texts' advice: slow the leader down). Measured, 0 and 1 are within about 1%
    # of this in four-player heuristic games.
    leader: float = 0.5
    # Search agents turn a score into a chance of winning: sigmoid(win_slope * score /
    # (win_horizon + steps the players still have to go)), so a lead counts for more late
    # in the game. Fitted (logistic regression) on 3,000 two-player heuristic self-play
    # games; the heuristic itself only ranks moves and does not use it.
    win_slope: float = 1.5
    win_horizon: float = 54.0

    def array(self) -> np.ndarray:
        return np.array([getattr(self, f.name) for f in dataclasses.fields(self)], dtype=np.float64)


DEFAULT_WEIGHTS = Weights()
_FIELDS = [f.name for f in dataclasses.fields(Weights)]
W_PROGRESS = _FIELDS.index("progress")
W_OUT = _FIELDS.index("out_of_start")
W_SAFE = _FIELDS.index("safe")
W_HOME = _FIELDS.index("home")
W_DANGER = _FIELDS.index("danger")
W_LATE = _FIELDS.index("late_threat")
W_START_ZONE = _FIELDS.index("start_zone")
W_BLOCKED = _FIELDS.index("blocked_circle")
W_BACKWARD = _FIELDS.index("backward_option")
W_LEADER = _FIELDS.index("leader")
W_WIN_SLOPE = _FIELDS.index("win_slope")
W_WIN_HORIZON = _FIELDS.index("win_horizon")

WIN_SCORE = 1.0e4  # score of a won game (lost: minus this); beyond any position's equity
DECIDED_LOGIT = 30.0  # evaluation_logit of a won game (lost: minus this); a chance of 1 - 1e-13
START_ZONE_LEN = 12  # the longest single move: squares a newly started pawn reaches next


@E.compiled
def progress(seat, code):
    """Steps a pawn has come from Start (0) towards Home (FULL_PROGRESS)."""
    if code == START:
        return 0
    return FULL_PROGRESS - STEPS_TO_HOME[seat, code]


@E.compiled(from_python=False)
def _mark(row, seat, dest, card):
    """Record that `card` lets `seat` end a move on track square `dest`, plus the squares a
    slide from there would sweep."""
    if dest < 0 or dest >= TRACK:
        return
    bit = 1 << card
    row[dest] |= bit
    owner = SLIDE_OWNER[dest]
    if owner != -1 and owner != seat:
        sq = dest
        while sq != SLIDE_END[dest]:
            sq = (sq + 1) % TRACK
            row[sq] |= bit


@E.compiled(from_python=False)
def _mark_reach(state, rules, seat, row):
    """row[square] := bitmask of the cards with which `seat` could bump a pawn on `square`
    next turn (Sorry! bumps excluded: they are aimed, see _sorry_target)."""
    ppp = rules[R_PAWNS]
    row[:] = 0
    in_play = 0
    in_start = False
    for i in range(ppp):
        code = E.pawn_code(state, seat, i)
        if code < HOME:
            in_play += 1
        elif code == START:
            in_start = True
    sorry_step = rules[R_SORRY_FORWARD]
    for i in range(ppp):
        code = E.pawn_code(state, seat, i)
        if code >= HOME:
            continue
        for c in range(N_CARDS):
            step = E.CARD_STEP[c] if c != CSORRY else sorry_step
            if step > 0:
                _mark(row, seat, FORWARD[seat, code, step], c)
            elif step < 0:
                _mark(row, seat, BACKWARD[seat, code, -step], c)
        # np.int64: a constant card would compile _mark once more (engine's COMPILE COST)
        _mark(row, seat, BACKWARD[seat, code, 1], np.int64(C10))
        if in_play >= 2:  # a split seven can move this pawn any of 1..6
            for a in range(1, 7):
                _mark(row, seat, FORWARD[seat, code, a], np.int64(C7))
    if in_start:
        for c in range(N_CARDS):
            if (rules[R_START_CARDS] >> c) & 1:
                _mark(row, seat, START_CIRCLE[seat], c)


@E.compiled(from_python=False)
def _pawn_worth(w, seat, code):
    """What a pawn is worth to its owner (lost entirely when it is bumped)."""
    if code == START:
        return 0.0
    v = w[W_PROGRESS] * progress(seat, code) + w[W_OUT]
    if code == HOME:
        return v + w[W_SAFE] + w[W_HOME]
    if code >= SAFE0:
        return v + w[W_SAFE]
    return v


@E.compiled(from_python=False)
def _has_start(state, rules, seat):
    for i in range(rules[R_PAWNS]):
        if E.pawn_code(state, seat, i) == START:
            return True
    return False


@E.compiled(from_python=False)
def _sorry_target(state, rules, w, attacker, has_start):
    """Flat index seat*MAX_SLOTS+slot of the pawn `attacker` would bump with a Sorry!: the
    most valuable pawn of the other side on the track. -1 if none, or if no pawn of the
    attacker's side waits in Start."""
    side_has_start = False
    for seat in range(N_SEATS):
        if E.is_active(state, seat) and E.same_side(rules, attacker, seat) and has_start[seat]:
            side_has_start = True
    if not side_has_start:
        return -1
    best = -1
    best_worth = -1.0
    for seat in range(N_SEATS):
        if E.same_side(rules, attacker, seat) or not E.is_active(state, seat):
            continue
        for i in range(rules[R_PAWNS]):
            code = E.pawn_code(state, seat, i)
            if code < TRACK:
                v = _pawn_worth(w, seat, code)
                if v > best_worth:
                    best_worth = v
                    best = seat * E.MAX_SLOTS + i
    return best


@E.compiled(from_python=False)
def _hit_chance(state, rules, w, chances, threat, sorry_target, has_start, seat, slot, code):
    """Chance that the other side bumps `seat`'s pawn on track square `code` before `seat`
    can move it (threats from seats moving after `seat` discounted)."""
    to_move = E.to_move(state)
    order = (seat - to_move) % 4  # how soon this seat moves; 0: next
    survive = 1.0
    for attacker in range(N_SEATS):
        if not E.is_active(state, attacker) or E.same_side(rules, attacker, seat):
            continue
        hit = 0.0
        mask = threat[attacker * TRACK + code]
        for c in range(N_CARDS):
            if (mask >> c) & 1:
                hit += chances[c]
        if sorry_target[attacker] == seat * E.MAX_SLOTS + slot:
            hit += chances[CSORRY]
        if has_start[attacker] and 1 <= (code - START_CIRCLE[attacker]) % TRACK <= START_ZONE_LEN:
            hit += w[W_START_ZONE]
        hit = min(hit, 1.0)
        if (attacker - to_move) % 4 > order:
            hit *= w[W_LATE]
        survive *= 1.0 - hit
    return 1.0 - survive


@E.compiled(from_python=False)
def _backward_gain(chances, seat, code):
    """Expected progress from a 4 (or a 10's one step back) that would carry a track pawn
    behind its own safety entry, saving most of a lap."""
    here = progress(seat, code)
    gain = 0.0
    back4 = BACKWARD[seat, code, 4]
    if back4 < TRACK and progress(seat, back4) > here:
        gain += chances[C4] * (progress(seat, back4) - here)
    back1 = BACKWARD[seat, code, 1]
    if back1 < TRACK and progress(seat, back1) > here:
        gain += chances[C10] * (progress(seat, back1) - here)
    return gain


@E.compiled(inline="always")
def seat_equities(state, rules, w, equity, extras=True):
    """equity[seat] for every active seat (0 for empty seats) of a position with no card in
    play (after a move's end of turn). `extras`: see the engine's COMPILE COST."""
    ppp = rules[R_PAWNS]
    chances = np.empty(N_CARDS)
    card_chances(state, rules, chances, extras)
    # reach[seat * TRACK + square]: cards with which `seat`'s own pawns could bump there next
    # turn; threat: the same for the seat's card, which under team rules moves the partner's
    # too. Flat: a 4 x TRACK array compiles numba's two-dimensional array code just for this.
    reach = np.empty(N_SEATS * TRACK, dtype=np.int64)  # not np.zeros: see the engine's COMPILE COST
    for sq in range(N_SEATS * TRACK):
        reach[sq] = 0
    has_start = np.empty(N_SEATS, dtype=np.bool_)  # not np.zeros, np.full: each compiles code of its own
    for seat in range(N_SEATS):
        has_start[seat] = False
        if E.is_active(state, seat):
            _mark_reach(state, rules, seat, reach[seat * TRACK : (seat + 1) * TRACK])
            has_start[seat] = _has_start(state, rules, seat)
    threat = reach.copy()
    sorry_target = np.empty(N_SEATS, dtype=np.int64)
    for seat in range(N_SEATS):
        sorry_target[seat] = -1
        if E.is_active(state, seat):
            sorry_target[seat] = _sorry_target(state, rules, w, seat, has_start)
            if rules[R_TEAMS]:
                for sq in range(TRACK):  # not threat[seat] |= ...: see engine's COMPILE COST
                    threat[seat * TRACK + sq] |= reach[((seat + 2) % 4) * TRACK + sq]
    for seat in range(N_SEATS):
        equity[seat] = 0.0
        if not E.is_active(state, seat):
            continue
        total = 0.0
        for i in range(ppp):
            code = E.pawn_code(state, seat, i)
            worth = _pawn_worth(w, seat, code)
            total += worth
            if code >= TRACK:
                continue
            hit = _hit_chance(state, rules, w, chances, threat, sorry_target, has_start, seat, i, code)
            total -= w[W_DANGER] * hit * worth
            total += w[W_BACKWARD] * w[W_PROGRESS] * _backward_gain(chances, seat, code)
            if code == START_CIRCLE[seat] and has_start[seat]:
                total -= w[W_BLOCKED]
        if extras is not None:  # Fire and Ice
            total += _fire_gain(state, rules, w, seat)
        equity[seat] = total


# Fire and Ice: the share of a fire move's gain a pawn holding Fire is worth before the move
# is made (it may be iced or bumped first, and the move comes only at the owner's next turn).
FIRE_SHARE = 0.5


@E.compiled
def _fire_gain(state, rules, w, seat):
    """Fire and Ice: what holding Fire is worth to `seat` (0 without Fire on its pawn): a
    share of the progress its fire move would make (to the triangle, then the slide)."""
    target = E.fire_move_target(state, rules, seat)
    if target < 0:
        return 0.0
    fire_seat, slot = E.fire_pawn(state)
    code = E.pawn_code(state, fire_seat, slot)
    return FIRE_SHARE * (_pawn_worth(w, seat, SLIDE_END[target]) - _pawn_worth(w, seat, code))


@E.compiled
def seat_score(state, rules, w, equity, seat):
    """A seat's score: its equity against a blend of the leader's and the opponents' mean
    equity (team rules: its side's equity against the other side's); +-WIN_SCORE once the
    game is decided."""
    winner = E.winner(state)
    if winner >= 0:
        return WIN_SCORE if E.same_side(rules, seat, winner) else -WIN_SCORE
    if rules[R_TEAMS]:
        mine = 0.0
        theirs = 0.0
        for o in range(4):
            if E.is_active(state, o):
                if E.same_side(rules, seat, o):
                    mine += equity[o]
                else:
                    theirs += equity[o]
        return mine - theirs
    best = -np.inf
    total = 0.0
    n = 0
    for o in range(4):
        if o != seat and E.is_active(state, o):
            best = max(best, equity[o])
            total += equity[o]
            n += 1
    return equity[seat] - w[W_LEADER] * best - (1.0 - w[W_LEADER]) * total / n


@E.compiled
def evaluate(state, rules, w, seat):
    """Score of a position with no card in play, from `seat`'s point of view."""
    equity = np.empty(4)
    seat_equities(state, rules, w, equity)
    return seat_score(state, rules, w, equity, seat)


@E.compiled
def win_chance(state, rules, w, score):
    """A seat's score as an estimated chance of winning (1 or 0 once decided)."""
    if score >= WIN_SCORE:
        return 1.0
    if score <= -WIN_SCORE:
        return 0.0
    return 1.0 / (1.0 + np.exp(-win_logit(state, rules, w, score)))


@E.compiled
def evaluation_logit(state, rules, w, seat):
    """The evaluation of `seat`'s position as the logit of a chance of winning (+-DECIDED_LOGIT
    once the game is decided); experiments/value_iteration.py learns a correction to it."""
    score = evaluate(state, rules, w, seat)
    if score >= WIN_SCORE:
        return DECIDED_LOGIT
    if score <= -WIN_SCORE:
        return -DECIDED_LOGIT
    return win_logit(state, rules, w, score)


@E.compiled
def win_logit(state, rules, w, score):
    """The logit of win_chance for a game not yet decided."""
    # Steps to go, as twice the players' mean (the fit was on two-player games).
    to_go = 0.0
    players = 0
    for seat in range(N_SEATS):
        if E.is_active(state, seat):
            players += 1
            for i in range(rules[R_PAWNS]):
                to_go += FULL_PROGRESS - progress(seat, E.pawn_code(state, seat, i))
    to_go *= 2.0 / players
    return w[W_WIN_SLOPE] * score / (w[W_WIN_HORIZON] + to_go)
