"""The engine as plain Python functions: create a state, list legal moves, apply a move to a
copy. Search agents and tools use this; the PettingZoo env is a thin adapter over the same
compiled functions in :mod:`sorry_env.board.engine`.

Every function takes the state array and the rules (a :class:`~sorry_env.board.rules.Rules` or a
preset name) and never mutates its input state unless its name says ``_inplace``. Each
checks the state array's shape, dtype and header ranges (:func:`sorry_env.checks.check_state`)
once per call before entering compiled code; the compiled functions of
:mod:`sorry_env.board.engine` are unchecked (a corrupted array there can crash the process).

Example::

    from sorry_env.board import game
    s = game.new_state("hasbro2003", num_players=2, seed=7)
    moves = game.legal_actions(s, "hasbro2003")
    s2 = game.step(s, "hasbro2003", moves[0])          # next card drawn from the seed
    after = game.after_move(s, "hasbro2003", moves[0])  # chance node: no card yet
    for card, p in game.chance_outcomes(after, "hasbro2003"):
        child = game.deal(after, "hasbro2003", card)
"""

import functools
from collections.abc import Iterable

import numpy as np

from ..checks import check_state, excerpt, is_integer
from . import engine as E
from .geometry import HOME, N_SEATS, SAFE0, START
from .render import COLOUR_NAMES
from .rules import CARD_NAMES, DEFAULT_PRESET, N_CARDS, Rules, get_rules

DEFAULT_SEATS = {2: (0, 2), 3: (0, 1, 2), 4: (0, 1, 2, 3)}


@functools.cache
def _rules_array(rules: Rules) -> np.ndarray:
    a = rules.array()
    a.setflags(write=False)
    return a


def rules_array(rules: Rules | str) -> np.ndarray:
    """The engine's read-only int64 rules array for a Rules or preset name."""
    return _rules_array(get_rules(rules))


@functools.cache
def _extras_args(rules: Rules) -> tuple:
    return (None,) if E.are_plain(_rules_array(rules)) else ()


def extras_args(rules: Rules | str) -> tuple:
    """The last argument of the engine's compiled entry points (``extras``) for these rules,
    passed as ``*extras_args(rules)``: ``(None,)`` for plain rules
    (:func:`sorry_env.board.engine.are_plain`), whose compiled code then leaves out the code
    of Fire and Ice, hands and split-seven parts; else ``()`` (the engine's COMPILE COST)."""
    return _extras_args(get_rules(rules))


def _check_state(state, rules) -> None:
    check_state(state, rules_array(rules), *extras_args(rules))


def seats_for(
    num_players: int | None = None, seats: Iterable[int] | None = None, rules: Rules | str | None = None
) -> tuple[int, ...]:
    """Validated tuple of seats in play: explicit `seats`, or the default for `num_players`;
    with `rules`, also checked against them (team rules seat all four players)."""
    if num_players is not None and (not is_integer(num_players) or num_players not in DEFAULT_SEATS):
        raise ValueError(f"num_players must be 2, 3 or 4, got {excerpt(num_players)}")
    if seats is None:
        if num_players is None:
            raise ValueError("num_players must be 2, 3 or 4, got None")
        seats = DEFAULT_SEATS[num_players]
    else:
        if (
            not isinstance(seats, (list, tuple, np.ndarray))
            or isinstance(seats, np.ndarray)
            and seats.ndim != 1
            or not all(isinstance(s, (int, np.integer)) and not isinstance(s, (bool, np.bool_)) for s in seats)
        ):
            raise ValueError(f"seats must be a list or tuple of seat numbers 0..3, got {excerpt(seats)}")
        given = seats
        seats = tuple(sorted(int(s) for s in seats))
        if len(set(seats)) != len(seats) or not 2 <= len(seats) <= 4 or any(s not in range(N_SEATS) for s in seats):
            raise ValueError(f"seats must be 2 to 4 distinct seats out of 0..3, got {excerpt(given)}")
        if num_players is not None and num_players != len(seats):
            raise ValueError(f"num_players={num_players} does not match seats={seats}")
    if rules is not None and get_rules(rules).teams != "none" and seats != (0, 1, 2, 3):
        raise ValueError(f"team rules ({get_rules(rules).name!r}) need 4 players in all four seats, got seats {seats}")
    return seats


MAX_SEED = 2**128  # numpy's SeedSequence takes any size; a longer seed is a mistake (and slow to hash)


def check_seed(seed: int) -> None:
    """ValueError unless `seed` is a non-negative integer below 2**128 (what numpy's SeedSequence takes)."""
    if not is_integer(seed) or not 0 <= seed < MAX_SEED:
        raise ValueError(f"seed must be a non-negative integer below 2**128, got {excerpt(seed)}")


def num_actions(rules: Rules | str) -> int:
    return E.n_actions(rules_array(rules))


def new_state(
    rules: Rules | str = DEFAULT_PRESET, num_players: int = 4, seats: Iterable[int] | None = None, seed: int = 0
) -> np.ndarray:
    """A new game: the pack shuffled and the first player chosen from `seed` (a non-negative
    integer, used modulo 2**32), a card drawn."""
    check_seed(seed)
    in_play = seats_for(num_players if seats is None else None, seats, rules)
    active = np.zeros(4, dtype=np.int64)
    active[list(in_play)] = 1
    state = np.zeros(E.STATE_SIZE, dtype=np.int64)
    E.init_state(state, rules_array(rules), active, int(seed) & 0xFFFFFFFF, *extras_args(rules))
    return state


def legal_actions(state: np.ndarray, rules: Rules | str) -> np.ndarray:
    """Legal action indices for the card in play (PASS alone if none)."""
    _check_state(state, rules)
    return _legal_actions(state, rules)


def _legal_actions(state, rules) -> np.ndarray:
    _require_running(state, rules)
    r = rules_array(rules)
    buf = np.empty(num_actions(rules), dtype=np.int64)  # not E.action_buffer: a compiled function less
    n = E.legal_actions(state, r, buf, *extras_args(rules))
    return np.sort(buf[:n])


def legal_mask(state: np.ndarray, rules: Rules | str) -> np.ndarray:
    _check_state(state, rules)
    _require_running(state, rules)
    mask = np.zeros(num_actions(rules), dtype=np.int8)
    E.legal_mask(state, rules_array(rules), mask)
    return mask


def check_action(state: np.ndarray, rules: Rules | str, action: int) -> int:
    """`action` as an int if legal, else a ValueError naming it and the legal actions."""
    _check_state(state, rules)
    return _check_action(state, rules, action)


def _check_action(state, rules, action) -> int:
    legal = _legal_actions(state, rules)
    try:
        a = _action_index(rules, action)
    except ValueError as exc:  # the index check's message, with the legal moves
        raise ValueError(f"{exc}; legal: {legal.tolist()}") from None
    if a not in legal:
        held = f"card {card(state)}" if state[E.CARD] >= 0 else "this hand"
        raise ValueError(
            f"action {a} is illegal for {held} ({describe_action(state, rules, a)}); legal: {legal.tolist()}"
        )
    return a


def step(state: np.ndarray, rules: Rules | str, action: int) -> np.ndarray:
    """A copy of `state` after the legal `action`, with the next card drawn (unless won)."""
    _check_state(state, rules)
    _require_running(state, rules)
    s = state.copy()
    E.step(s, rules_array(rules), _check_action(state, rules, action), *extras_args(rules))
    return s


def after_move(state: np.ndarray, rules: Rules | str, action: int) -> np.ndarray:
    """A copy after `action` and the end of the turn, before the next draw (a chance node:
    card is -1). Use :func:`chance_outcomes` and :func:`deal` to expand it. With hands the
    mover's replacement card is drawn too, so the result is already a decision state; so is
    a part of a split seven under the Hasbro 2003 team rules (same player, same card), and
    (Fire and Ice) a turn's end that leaves the next player a fire decision
    (:func:`fire_decision`); after the fire decision itself the same player's card is next."""
    _check_state(state, rules)
    _require_running(state, rules)
    s = state.copy()
    E.play(s, rules_array(rules), _check_action(state, rules, action))
    return s


def equivalent_actions(state: np.ndarray, rules: Rules | str) -> list[list[int]]:
    """The legal actions grouped by the position they lead to: actions whose :func:`after_move`
    states are equal form one group (a split seven's two orders that end on the same squares,
    most often). Groups are in the order of their first action in :func:`legal_actions`, and
    each group lists its actions in that order, so ``[g[0] for g in groups]`` shows a person
    each distinct outcome once. The action space itself keeps every action (both orders of a
    split are separate actions on purpose: :doc:`action-space`)."""
    _check_state(state, rules)
    _require_running(state, rules)
    array = rules_array(rules)
    groups: dict[bytes, list[int]] = {}
    for action in _legal_actions(state, rules):
        after = state.copy()
        E.play(after, array, int(action))
        groups.setdefault(after.tobytes(), []).append(int(action))
    return list(groups.values())


def chance_outcomes(state: np.ndarray, rules: Rules | str) -> list[tuple[str, float]]:
    """[(card name, probability)] of the next draw at a chance node (from after_move), from
    the public draw-pile counts (when the pile is empty: the whole pack, about to be
    reshuffled)."""
    _require_chance_node(state, rules, "chance_outcomes")
    counts = state[E.REMAIN : E.REMAIN + N_CARDS].astype(float)
    if counts.sum() == 0:
        counts = np.array(get_rules(rules).pack, dtype=float)
    total = counts.sum()
    return [(CARD_NAMES[c], float(counts[c] / total)) for c in range(N_CARDS) if counts[c] > 0]


def deal(state: np.ndarray, rules: Rules | str, card: str) -> np.ndarray:
    """A copy of a chance-node state with `card` (a name: "1" .. "12", "SORRY") drawn as the
    card to play. Names only: an index would be a trap (index 7 is the 10)."""
    _require_chance_node(state, rules, "deal")
    if not isinstance(card, str) or card not in CARD_NAMES:
        raise ValueError(f"card must be one of the names {list(CARD_NAMES)}, got {card!r}")
    if card not in dict(chance_outcomes(state, rules)):
        raise ValueError(f"card {card} is not in the draw pile")
    s = state.copy()
    E.deal(s, rules_array(rules), CARD_NAMES.index(card))  # an empty pile is reshuffled first
    return s


def public_view(state: np.ndarray, rules: Rules | str, rng: np.random.Generator) -> np.ndarray:
    """A copy of `state` with everything the player to move cannot see re-drawn from `rng`:
    the draw-pile order, the other players' hands (play for points; dealt again from the
    unseen cards) and the generator state (re-seeded last, so the re-deal cannot be read
    back from it)."""
    s = state.copy()
    E.seed_generator(s, int(rng.integers(0, 2**32)))
    E.redeal_hidden(s, rules_array(rules), E.to_move(s), *extras_args(rules))
    E.seed_generator(s, int(rng.integers(0, 2**32)))
    return s


def to_move(state: np.ndarray) -> int:
    return int(state[E.TO_MOVE])


def card(state: np.ndarray) -> str | None:
    """Name of the card in play, or None at a chance node."""
    c = int(state[E.CARD])
    return CARD_NAMES[c] if c >= 0 else None


def winner(state: np.ndarray) -> int | None:
    """Winning seat, or None while the game runs."""
    w = int(state[E.WINNER])
    return w if w >= 0 else None


def same_side(rules: Rules | str, seat: int, winner: int) -> bool:
    """True if `seat` shares in the win of `winner` (itself, or its partner under team rules):
    :func:`sorry_env.board.engine.same_side`."""
    return bool(E.same_side(rules_array(rules), int(seat), int(winner)))


def is_double_game(state: np.ndarray, rules: Rules | str) -> bool:
    """Team rules: the winning partnership finished before either opponent had all pawns Home."""
    w = winner(state)
    if w is None or get_rules(rules).teams == "none":
        return False
    ppp = get_rules(rules).pawns_per_player
    return not any(
        all(state[E.PAWNS + s * E.MAX_SLOTS + i] == HOME for i in range(ppp)) for s in ((w + 1) % 4, (w + 3) % 4)
    )


def seats(state: np.ndarray) -> tuple[int, ...]:
    return tuple(s for s in range(N_SEATS) if state[E.ACTIVE + s])


def decode_action(rules: Rules | str, action: int) -> tuple[str, int, int, int, int]:
    """(kind, i, j, first, target) of an action index. kind is one of "pass", "start"
    (i: 0 own pawn, 1 partner's under team rules), "move" (movable pawn i, the card's
    distance), "back1" (pawn i), "split" (pawn i moves `first`, then pawn j moves 7 - first),
    "seven_part" (Hasbro 2003 teams: pawn i moves `first` as one part of a split seven),
    "swap" (pawn i with target slot t), "sorry" (i: 0 from own Start, 1 from the partner's;
    target slot t), "discard" (play for points: i is the card). Movable pawn slots 0..P-1 are
    the acting seat's pawns in canonical order, then (team rules) the partner's. Unused fields
    are -1. Fire and Ice adds "no_fire_move" and "fire_move" (the decision before the draw;
    every field -1) and a token choice on the 1 and 2 (:func:`action_token`). The engine's
    decoder (:func:`sorry_env.board.engine.decode_action`) in words."""
    a = _action_index(rules, action)
    _, kind, i, j, first, target = E.decode_action(rules_array(rules), a)
    return E.ACTION_KINDS[kind], int(i), int(j), int(first), int(target)


def action_token(rules: Rules | str, action: int) -> int:
    """Fire and Ice: the token choice k of an action index (``k*N0 + a``): on a 1, k = 1 + t
    puts Ice on target slot t (k = 0: Ice to the middle, no opponent pawn on the track); on a
    2, k = 1 + i puts Fire on own pawn slot i (k = 0: Fire stays). 0 for every other action
    and under rules without Fire and Ice."""
    return int(E.action_token(rules_array(rules), _action_index(rules, action)))


def fire_decision(state: np.ndarray) -> bool:
    """True if the player to move is deciding on a fire move, before the draw (Fire and Ice)."""
    return bool(E.fire_decision_pending(state))


def tokens(state: np.ndarray) -> dict:
    """Fire and Ice: where each token is, ``{"fire": (seat, slot) or None, "ice": ...}``
    (slot: the seat's pawn in canonical order)."""
    out = {}
    for name, (seat, slot) in (("fire", E.fire_pawn(state)), ("ice", E.ice_pawn(state))):
        out[name] = (int(seat), int(slot)) if seat >= 0 else None
    return out


def _action_index(rules, action) -> int:
    total = num_actions(rules)
    if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"action must be an integer in 0..{total - 1}, got {excerpt(action)}")
    a = int(action)
    if not 0 <= a < total:
        raise ValueError(f"action {a} is out of range 0..{total - 1}")
    return a


def action_card(state: np.ndarray, rules: Rules | str, action: int) -> int | None:
    """Index of the card an action plays: the card in play, or with hands the card chosen
    (None for a discard)."""
    if not get_rules(rules).hand_size:
        return int(state[E.CARD])
    c = int(E.decode_action(rules_array(rules), _action_index(rules, action))[0])
    return c if c >= 0 else None


def describe_action(state: np.ndarray, rules: Rules | str, action: int) -> str:
    """Words for an action index in this state (for logs, errors and the play command)."""
    _check_state(state, rules)
    kind, i, j, first, t = decode_action(rules, action)
    if kind == "discard":
        return f"discard a {CARD_NAMES[i]} (no card in the hand can move)"
    if kind == "no_fire_move":
        return "no fire move (draw a card)"
    if kind == "fire_move":
        square = int(E.fire_move_target(state, rules_array(rules), int(state[E.TO_MOVE])))
        return f"fire move: the Fire pawn jumps to the slide at square {square} and slides"
    c = action_card(state, rules, action)
    words = _ActionWords(state, rules).describe(kind, i, j, first, t, c)
    k = action_token(rules, action) if get_rules(rules).fire_ice else 0
    if get_rules(rules).fire_ice and c == 0:
        ice = _ActionWords(state, rules).target(k - 1) if k else "the middle (no opponent pawn on the track)"
        words = f"Ice onto {ice}, then {words}"
    elif get_rules(rules).fire_ice and c == 1 and k:
        words = f"Fire onto {_ActionWords(state, rules).pawn(k - 1)}, then {words}"
    if not get_rules(rules).hand_size:
        return words
    # With hands the card is part of the choice; these moves' words already name it.
    if kind in ("split", "seven_part", "swap", "sorry"):
        return f"play {words}"
    assert c is not None  # only a discard plays no card, and it returned above
    return f"play {CARD_NAMES[c]}: {words}"


class _ActionWords:
    """Names of pawns and targets in one state, as the play command shows them."""

    def __init__(self, state, rules):
        self.state, self.rules = state, rules
        self.r = rules_array(rules)
        self.me = int(state[E.TO_MOVE])

    def where(self, seat, slot):
        code = int(self.state[E.PAWNS + seat * E.MAX_SLOTS + slot])
        if code == START:
            return "Start"
        if code == HOME:
            return "Home"
        return f"safe {code - SAFE0}" if code >= SAFE0 else f"square {code}"

    def pawn(self, i):
        seat, slot = E.movable_pawn(self.r, self.me, i)
        owner = "" if seat == self.me else f"partner {COLOUR_NAMES[seat]}'s "
        return f"{owner}pawn {i} ({self.where(seat, slot)})"

    def target(self, t):
        seat, slot = E.target_pawn(self.state, self.r, self.me, t)
        return (
            f"{COLOUR_NAMES[seat]}'s pawn on {self.where(seat, slot)}"
            if seat >= 0
            else f"target {t} (a pawn of a seat not in this game)"
        )

    def describe(self, kind, i, j, first, t, card):
        partner = COLOUR_NAMES[(self.me + 2) % 4]
        if kind == "pass":
            return "pass"
        if kind == "start":
            return "start a pawn" if i == 0 else f"start a pawn of partner {partner}"
        if kind == "move":
            step = int(E.CARD_STEP[card]) if card != 10 else get_rules(self.rules).sorry_forward
            return f"{self.pawn(i)} moves {-step} back" if step < 0 else f"{self.pawn(i)} moves {step} forward"
        if kind == "back1":
            return f"{self.pawn(i)} moves 1 back"
        if kind == "split":
            return f"split 7: {self.pawn(i)} moves {first}, then {self.pawn(j)} moves {7 - first}"
        if kind == "seven_part":
            left = int(self.state[E.SEVEN_LEFT]) or 7
            return f"split 7: {self.pawn(i)} moves {first} ({left - first} of the 7 left)"
        if kind == "swap":
            return f"11: swap {self.pawn(i)} with {self.target(t)}"
        start = "Start" if i == 0 else f"partner {partner}'s Start"
        return f"Sorry!: a pawn from {start} bumps {self.target(t)}"


def _require_card(state, rules):
    if state[E.CARD] < 0 and not get_rules(rules).hand_size and not E.fire_decision_pending(state):
        raise ValueError("no card in play: this is a chance node; deal or draw a card first")


def _require_chance_node(state, rules, caller):
    _check_state(state, rules)
    if get_rules(rules).hand_size:
        raise ValueError(f"{caller}: with hands there are no chance nodes (after_move already draws)")
    if state[E.CARD] >= 0 or state[E.WINNER] >= 0 or E.fire_decision_pending(state):
        raise ValueError(f"{caller} needs a running game with no card in play (from after_move), not a fire decision")


def _require_running(state, rules):
    if state[E.WINNER] >= 0:
        raise ValueError(f"the game is over (seat {int(state[E.WINNER])} won)")
    _require_card(state, rules)
