"""JSON-able state dicts: the public way to write down, load and inspect a position.

Schema (every key but ``pawns`` and ``to_move`` optional)::

    {
      "to_move": 0,                       # seat to play, 0..3
      "card": "7",                        # card to play: "1".."12", "SORRY"; null: draw one
      "draw_again": false,                # the card was drawn as the draw-again of a 2
      "turn": 0,                          # cards played so far (counts towards truncation)
      "pawns": [                          # one entry per seat; null: empty seat
        [["track", 12], ["safe", 3], ["start"], ["home"]],
        null,
        [["start"], ["start"], ["start"], ["start"]],
        null
      ],
      "draw_pile": {"1": 5, "2": 4, ...}, # cards left to draw; default: the whole pack less
                                          # the card in play (and the hands). The ORDER is
                                          # never stored: it is hidden, shuffled from the seed.
      "hands": [{"5": 2, "SORRY": 1, ...}, null, ...]  # play for points only: each seat's
    }                                     # hand; default: dealt from the draw pile by the seed

With hands (play for points) there is no card in play: ``card`` must be null or absent.

Fire and Ice (``hasbro2013_fire_ice``): ``"fire"`` and ``"ice"`` each name the pawn holding
the token as ``[seat, i]`` (the i-th entry of that seat's ``pawns`` list), or null while
the token is in the middle (the default). Ice is only ever on a pawn on the track, Fire on
a pawn on the track or in its safety zone. ``"fire_decision": true`` (card null) is the
moment before the draw when the player to move decides on a fire move; it needs a fire
move to exist. ``state_to_dict`` writes all three keys under these rules, none otherwise.

Under the Hasbro 2003 team rules a seven may be split among many pawns, one part per step;
while such a seven is under way the dict has ``"split_seven": {"left": 1..6, "moved": [i, ...]}``
(steps still to move; movable slots already moved), ``card`` is "7", and the pawns are
listed in the slot order in force (they are re-sorted when the seven is finished).

``state_to_dict`` writes the pawns of each seat in canonical order (most advanced first),
so ``state_to_dict(state_from_dict(d))`` equals ``d`` once ``d`` is in that order, and
``state_from_dict(state_to_dict(s))`` reproduces every public fact of ``s``.
"""

from typing import Any

import numpy as np

from ..checks import check_state_keys, excerpt, is_integer
from . import engine as E
from .game import same_side, seats_for
from .geometry import HOME, N_SEATS, SAFE0, SAFE_LEN, SLIDE_END, SLIDE_OWNER, START, TRACK
from .rules import CARD_INDEX, CARD_NAMES, N_CARDS, Rules

KEYS = {"to_move", "card", "draw_again", "turn", "pawns", "draw_pile", "hands", "split_seven"}
KEYS |= {"fire", "ice", "fire_decision"}  # Fire and Ice presets only


def _code(seat, pos):
    """Pawn code of one position entry, or a ValueError naming the problem."""
    if not isinstance(pos, (list, tuple)) or not pos or not isinstance(pos[0], str):
        raise ValueError(f"seat {seat}: a pawn position must be a list like ['track', 12], got {excerpt(pos)}")
    kind = pos[0]
    if kind in ("start", "home"):
        if len(pos) != 1:
            raise ValueError(f"seat {seat}: [{excerpt(kind)}] takes no number, got {excerpt(pos)}")
        return START if kind == "start" else HOME
    if kind in ("track", "safe"):
        limit = TRACK if kind == "track" else SAFE_LEN
        if len(pos) != 2 or not is_integer(pos[1]):
            raise ValueError(f"seat {seat}: {excerpt(kind)} needs one integer square, got {excerpt(pos)}")
        if not 0 <= pos[1] < limit:
            raise ValueError(f"seat {seat}: {kind} square must be 0..{limit - 1}, got {excerpt(pos[1])}")
        return int(pos[1]) if kind == "track" else SAFE0 + int(pos[1])
    raise ValueError(f"seat {seat}: unknown position kind {excerpt(kind)}; use start, track, safe or home")


def code_to_position(code: int) -> list:
    """The state-dict entry of a pawn code."""
    code = int(code)
    if code == START:
        return ["start"]
    if code == HOME:
        return ["home"]
    if code >= SAFE0:
        return ["safe", code - SAFE0]
    return ["track", code]


MAX_TURN = 2**62  # the engine counts turns in int64


def state_from_dict(d: dict, rules: Rules, seed: int) -> np.ndarray:
    """A validated engine state from a state dict; the hidden draw order comes from `seed`.
    Raises ValueError (naming the problem, quoting at most a short excerpt of the input) on
    any malformed or impossible state, including one where the player to move has no legal
    action (such as a split seven that cannot be finished)."""
    try:
        return _state_from_dict(d, rules, seed)
    except (TypeError, OverflowError, RecursionError, KeyError, IndexError, AttributeError) as exc:
        # A shape the checks below did not foresee: still the documented error type.
        raise ValueError(f"malformed state ({type(exc).__name__}: {excerpt(str(exc), 120)})") from None


def _state_from_dict(d, rules: Rules, seed: int) -> np.ndarray:
    """The checks and the build, in the order their errors take precedence."""
    check_state_keys(d, KEYS, ("pawns", "to_move"))
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    active = _place_pawns(d["pawns"], rules, state)
    to_move = d["to_move"]
    if not is_integer(to_move) or to_move not in active:
        raise ValueError(f"to_move must be a seat in play {active}, got {excerpt(to_move)}")
    state[E.TO_MOVE] = to_move
    _check_not_over(state, rules, active)
    card, draw_again, turn = _card_and_turn(d, rules)
    hands = _hands(d, rules, active)
    remain = _draw_pile(d, rules, card, hands)
    _lay_deck(state, rules, remain, seed)
    state[E.WINNER] = -1
    state[E.TURN] = turn
    state[E.DRAW_AGAIN] = int(draw_again)
    state[E.CARD] = -1
    fire_ref = _tokens(d, rules, state, active)
    if not _split_seven(d, rules, card, state):
        for seat in active:
            E.sort_seat(state, seat, rules.pawns_per_player)
    if fire_ref is not None:  # the pawn holding Fire, found again after sorting
        seat, code = fire_ref
        slot = next(i for i in range(rules.pawns_per_player) if state[E.PAWNS + seat * E.MAX_SLOTS + i] == code)
        state[E.FIRE] = seat * E.MAX_SLOTS + slot + 1
    fire_decision = _fire_decision(d, rules, state, card, int(to_move))
    _deal(state, rules, active, hands, card, fire_decision)
    _check_playable(state, rules)
    return state


def _place_pawns(pawns, rules: Rules, state: np.ndarray) -> list[int]:
    """Write the pawns of the state dict into `state`; returns the seats in play."""
    ppp = rules.pawns_per_player
    if not isinstance(pawns, (list, tuple)) or len(pawns) != N_SEATS:
        raise ValueError(f"'pawns' must list {N_SEATS} seats (null for an empty seat)")
    state[E.PAWNS : E.PAWNS + N_SEATS * E.MAX_SLOTS] = -1
    occupied: dict = {}  # track square, or (seat, safety square) -> the seat of the pawn on it
    for seat, seat_pawns in enumerate(pawns):
        if seat_pawns is None:
            continue
        if not isinstance(seat_pawns, (list, tuple)) or len(seat_pawns) != ppp:
            raise ValueError(
                f"seat {seat} must have exactly {ppp} pawns under rules {rules.name!r}, got {excerpt(seat_pawns)}"
            )
        state[E.ACTIVE + seat] = 1
        for slot, pos in enumerate(seat_pawns):
            code = _code(seat, pos)
            _occupy(occupied, seat, code)
            state[E.PAWNS + seat * E.MAX_SLOTS + slot] = code
    active = [s for s in range(N_SEATS) if state[E.ACTIVE + s]]
    if len(active) < 2:
        raise ValueError(f"a game needs 2 to 4 seats in play, got {len(active)}")
    seats_for(seats=active, rules=rules)
    return active


def _occupy(occupied: dict, seat: int, code: int) -> None:
    """Record seat's pawn on square `code`; ValueError if no pawn may stand there."""
    if code < TRACK and SLIDE_OWNER[code] not in (-1, seat):
        raise ValueError(
            f"seat {seat}: track square {code} is the triangle of seat {SLIDE_OWNER[code]}'s "
            f"slide; a pawn landing there slides on to square {SLIDE_END[code]}, so no pawn "
            "of another colour can stand on it"
        )
    if code < TRACK:
        if code in occupied:
            raise ValueError(f"track square {code} holds two pawns (seats {occupied[code]} and {seat})")
        occupied[code] = seat
    elif code < HOME:
        if (seat, code) in occupied:
            raise ValueError(f"seat {seat}: two pawns on safe {code - SAFE0}")
        occupied[(seat, code)] = seat


def _check_not_over(state: np.ndarray, rules: Rules, active: list[int]) -> None:
    for seat in active:
        team = [s for s in active if same_side(rules, seat, s)]
        if all(state[E.PAWNS + s * E.MAX_SLOTS + i] == HOME for s in team for i in range(rules.pawns_per_player)):
            raise ValueError(f"seat {seat} (and any partner) already has every pawn Home: the game is over")


def _card_and_turn(d: dict, rules: Rules) -> tuple:
    """(card in play or None, draw_again, turn) of the state dict, checked."""
    card = d.get("card")
    if card is not None and (not isinstance(card, str) or card not in CARD_INDEX):
        raise ValueError(f"unknown card {excerpt(card)}; cards are {list(CARD_NAMES)} or null")
    draw_again = _flag(d, "draw_again")
    turn = d.get("turn", 0)
    if not is_integer(turn) or not 0 <= turn < MAX_TURN:
        raise ValueError(f"turn must be an integer in 0..2**62 - 1, got {excerpt(turn)}")
    if rules.hand_size and card is not None:
        raise ValueError(f"rules {rules.name!r} play from hands: there is no card in play, so 'card' must be null")
    return card, draw_again, turn


def _draw_pile(d: dict, rules: Rules, card, hands) -> np.ndarray:
    """The count of each card in the draw pile: the dict's ``draw_pile``, checked against the
    pack, the card in play and the hands; by default every card not elsewhere."""
    pack = np.array(rules.pack, dtype=np.int64)
    in_play = np.zeros(N_CARDS, dtype=np.int64)
    if card is not None:
        in_play[CARD_INDEX[card]] = 1
        if pack[CARD_INDEX[card]] == 0:
            raise ValueError(f"card {excerpt(card)} is not in the {rules.name!r} pack")
    if hands is not None and (hands.sum(axis=0) + in_play > pack).any():
        raise ValueError("hands (and the card in play) hold more cards than the pack")
    if "draw_pile" not in d:
        return pack - in_play - (hands.sum(axis=0) if hands is not None else 0)
    remain = _card_counts(d["draw_pile"], -1000, 1000)  # negative counts: the next check names them
    if remain is None:
        raise ValueError(
            f"draw_pile must map card names {list(CARD_NAMES)} to integer counts, got {excerpt(d['draw_pile'])}"
        )
    negative = [CARD_NAMES[c] for c in range(N_CARDS) if remain[c] < 0]
    if negative:
        raise ValueError(f"draw_pile counts for {negative} are negative")
    over = [CARD_NAMES[c] for c in range(N_CARDS) if remain[c] + in_play[c] > pack[c]]
    if over:
        raise ValueError(
            f"draw_pile counts for {over} exceed the pack {dict(zip(CARD_NAMES, rules.pack))} "
            f"(the card in play counts too)"
        )
    if hands is not None and (hands.sum(axis=0) + remain + in_play > pack).any():
        raise ValueError("hands and draw_pile together hold more cards than the pack")
    return remain


def _card_counts(counts, low: int, high: int) -> np.ndarray | None:
    """The count of each card of `counts`, a map from card names to integers in low..high, or
    None if it is not one (the draw pile's and each hand's form)."""
    if (
        not isinstance(counts, dict)
        or set(counts) - set(CARD_NAMES)
        or not all(is_integer(v) and low <= v <= high for v in counts.values())
    ):
        return None
    return np.array([counts.get(c, 0) for c in CARD_NAMES], dtype=np.int64)


def _flag(d: dict, key: str) -> bool:
    """The true/false entry `key` of the state dict (default false)."""
    value = d.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f"{key} must be true or false, got {excerpt(value)}")
    return value


def _lay_deck(state: np.ndarray, rules: Rules, remain: np.ndarray, seed: int) -> None:
    """The deck: the draw pile (shuffled from the seed) at the end, everything else before it."""
    pack = np.array(rules.pack, dtype=np.int64)
    size = int(pack.sum())
    used = pack - remain
    state[E.DECK : E.DECK + size] = np.concatenate(
        [np.repeat(np.arange(N_CARDS), used), np.repeat(np.arange(N_CARDS), remain)]
    )
    state[E.DRAW_POS] = size - int(remain.sum())
    state[E.REMAIN : E.REMAIN + N_CARDS] = remain
    state[E.RNG] = seed & 0xFFFFFFFF
    E.shuffle_draw_pile(state, rules.array())


def _fire_decision(d: dict, rules: Rules, state: np.ndarray, card, to_move: int) -> bool:
    fire_decision = _flag(d, "fire_decision")
    if fire_decision:
        if card is not None:
            raise ValueError("fire_decision comes before the draw: 'card' must be null")
        if E.fire_move_target(state, rules.array(), to_move) < 0:
            raise ValueError(
                f"fire_decision: seat {to_move} has no fire move (Fire not on its pawn, or that pawn cannot make one)"
            )
        state[E.FIRE_PENDING] = 1
    return fire_decision


def _deal(state: np.ndarray, rules: Rules, active: list[int], hands, card, fire_decision: bool) -> None:
    """The hands (given, or dealt from the pile), else the card in play (given, or drawn)."""
    r = rules.array()
    if rules.hand_size:
        if hands is None:
            for seat in active:
                for _ in range(rules.hand_size):
                    E.draw_to_hand(state, r, seat)
        else:
            state[E.HANDS : E.HANDS + N_SEATS * N_CARDS] = hands.reshape(-1)
    elif card is None:
        if not fire_decision:
            E.draw(state, r)
    else:
        state[E.CARD] = CARD_INDEX[card]


def _check_playable(state: np.ndarray, rules: Rules) -> None:
    """A loaded game must be playable: the engine offers PASS when nothing else is legal,
    except in the middle of a split seven, whose remainder may have no pawn to move."""
    r = rules.array()
    if E.legal_actions(state, r, np.empty(E.n_actions(r), dtype=np.int64)) == 0:
        what = (
            f"the split seven's remaining {int(state[E.SEVEN_LEFT])} steps cannot be moved by any pawn not yet moved"
            if state[E.SEVEN_LEFT]
            else "the player to move"
        )
        raise ValueError(f"no legal action in this position: {what}")


def _split_seven(d, rules, card, state):
    """Load a split seven under way (Hasbro 2003 teams); True if one is."""
    if "split_seven" not in d:
        return False
    if rules.teams != "hasbro2003":
        raise ValueError(f"'split_seven' only exists under the Hasbro 2003 team rules, not {rules.name!r}")
    seven = d["split_seven"]
    P = 2 * rules.pawns_per_player
    if (
        not isinstance(seven, dict)
        or set(seven) != {"left", "moved"}
        or not is_integer(seven["left"])
        or not 1 <= seven["left"] <= 6
        or not isinstance(seven["moved"], list)
        or not seven["moved"]
        or any(not is_integer(i) or not 0 <= i < P for i in seven["moved"])
        or len(set(seven["moved"])) != len(seven["moved"])
    ):
        raise ValueError(
            f"split_seven must be {{'left': 1..6, 'moved': [distinct slots 0..{P - 1}]}}, got {excerpt(seven)}"
        )
    if len(seven["moved"]) > 7 - seven["left"]:
        raise ValueError(
            f"split_seven: {len(seven['moved'])} pawns moved, but only {7 - seven['left']} of the 7 "
            "steps were used (each part moves at least one)"
        )
    if card != "7":
        raise ValueError(f"a split seven is under way, so the card must be '7', got {excerpt(card)}")
    state[E.SEVEN_LEFT] = seven["left"]
    state[E.SEVEN_MOVED] = sum(1 << i for i in seven["moved"])
    return True


def _tokens(d, rules, state, active):
    """Load Ice (its square) and check Fire (Fire and Ice presets); returns (seat, code) of
    the pawn holding Fire, or None. `state` holds the pawns in the dict's order."""
    given = [k for k in ("fire", "ice", "fire_decision") if k in d]
    if not rules.fire_ice:
        if given:
            raise ValueError(f"rules {rules.name!r} have no Fire and Ice; remove {given} from the state")
        return None
    refs = {}
    for key in ("fire", "ice"):
        ref = d.get(key)
        if ref is None:
            continue
        if (
            not isinstance(ref, (list, tuple))
            or len(ref) != 2
            or not all(map(is_integer, ref))
            or ref[0] not in active
            or not 0 <= ref[1] < rules.pawns_per_player
        ):
            raise ValueError(
                f"{key} must be null (the middle) or [seat, i]: a seat in play {active} and one of its pawns "
                f"0..{rules.pawns_per_player - 1}, got {excerpt(ref)}"
            )
        code = int(state[E.PAWNS + int(ref[0]) * E.MAX_SLOTS + int(ref[1])])
        if key == "ice" and code >= TRACK:
            raise ValueError(f"ice is on a pawn in {code_to_position(code)[0]}: Ice only goes on a pawn on the track")
        if key == "fire" and code >= HOME:
            raise ValueError(f"fire is on a pawn in {code_to_position(code)[0]}: Fire leaves a pawn in Start or Home")
        refs[key] = (int(ref[0]), code)
    if "ice" in refs:
        state[E.ICE] = refs["ice"][1] + 1
    return refs.get("fire")


def _hands(d, rules, active):
    """The seats' hands as a (4, N_CARDS) count array, None when not given (or no hands)."""
    if "hands" not in d:
        return None
    if not rules.hand_size:
        raise ValueError(f"rules {rules.name!r} have no hands; remove 'hands' from the state")
    given = d["hands"]
    if not isinstance(given, (list, tuple)) or len(given) != 4:
        raise ValueError("'hands' must list 4 seats (null for an empty seat)")
    hands = np.zeros((4, N_CARDS), dtype=np.int64)
    for seat, hand in enumerate(given):
        if (hand is None) != (seat not in active):
            raise ValueError(f"hands: seat {seat} must be {'null (empty seat)' if seat not in active else 'a hand'}")
        if hand is None:
            continue
        counts = _card_counts(hand, 0, 5)
        if counts is None:
            raise ValueError(f"hands: seat {seat} must map card names to counts, got {excerpt(hand)}")
        hands[seat] = counts
        if hands[seat].sum() != rules.hand_size:
            raise ValueError(f"hands: seat {seat} holds {hands[seat].sum()} cards, not {rules.hand_size}")
    return hands


def state_to_dict(state: np.ndarray, rules: Rules) -> dict:
    """The state dict of an engine state (pawns in canonical order)."""
    ppp = rules.pawns_per_player
    pawns: list[list[list] | None] = []  # per seat: each pawn's position, None for an empty seat
    for seat in range(N_SEATS):
        if not state[E.ACTIVE + seat]:
            pawns.append(None)
            continue
        pawns.append([code_to_position(state[E.PAWNS + seat * E.MAX_SLOTS + i]) for i in range(ppp)])
    card = int(state[E.CARD])
    d: dict[str, Any] = {
        "to_move": int(state[E.TO_MOVE]),
        "card": CARD_NAMES[card] if card >= 0 else None,
        "draw_again": bool(state[E.DRAW_AGAIN]),
        "turn": int(state[E.TURN]),
        "pawns": pawns,
        "draw_pile": {CARD_NAMES[c]: int(state[E.REMAIN + c]) for c in range(N_CARDS)},
    }
    if rules.fire_ice:
        fire_seat, fire_slot = E.fire_pawn(state)
        ice_seat, ice_slot = E.ice_pawn(state)
        d["fire"] = [int(fire_seat), int(fire_slot)] if fire_seat >= 0 else None
        d["ice"] = [int(ice_seat), int(ice_slot)] if ice_seat >= 0 else None
        d["fire_decision"] = bool(E.fire_decision_pending(state))
    if state[E.SEVEN_LEFT] > 0:
        d["split_seven"] = {
            "left": int(state[E.SEVEN_LEFT]),
            "moved": [i for i in range(8) if (state[E.SEVEN_MOVED] >> i) & 1],
        }
    if rules.hand_size:
        d["hands"] = [
            {
                CARD_NAMES[c]: int(state[E.HANDS + seat * N_CARDS + c])
                for c in range(N_CARDS)
                if state[E.HANDS + seat * N_CARDS + c]
            }
            if state[E.ACTIVE + seat]
            else None
            for seat in range(N_SEATS)
        ]
    return d
