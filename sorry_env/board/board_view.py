"""The board game as a person plays it in the terminal and the browser (:class:`BoardPlayView`,
the board game's :meth:`sorry_env.games.Game.play_view`): pawns keep their labels all game
(:class:`sorry_env.board.narrate.PawnLabels`), moves are told with their consequences
(:func:`sorry_env.board.narrate.describe_move`), the moves on offer list each distinct outcome once, the
board is drawn with the labels and the viewer's own hand, and the browser page gets the state
dict, the labels, where the Fire and Ice tokens are and each move's click plan.

Click plans
-----------
Each legal move carries ``clicks``: the board cells a person clicks, in order, to play it.
Cells are named by keys the page gives its SVG elements:

=====================  ============================================
key                    cell
=====================  ============================================
``track:N``            track square N (0..59)
``safe:S:K``           seat S's safety square K (0..4)
``start:S``            seat S's Start circle (any of its pawns there)
``home:S``             seat S's Home circle
``pass``               the Pass button (no move, or declining a swap)
``card:NAME``          play for points: the card chosen from the hand
``discard:NAME``       play for points: discard that card
=====================  ============================================

A move is the moving pawn's cell, then where it lands (before any slide); a swap or a
Sorry! is the own pawn (or Start), then the other pawn; a split seven is the first pawn,
where it lands, the second pawn, where it lands. Two moves can share every click (an 11
moved onto a pawn, or swapped with it): the page then asks which, by their descriptions.
"""

from __future__ import annotations

import numpy as np

from ..games import Game, PlayView
from . import engine as E
from . import game
from .geometry import BACKWARD, FORWARD, HOME, SAFE0, START, START_CIRCLE, TRACK
from .narrate import PawnLabels, describe_move, option_text
from .render import COLOUR_NAMES, render_ansi, token_text
from .rules import CARD_NAMES, CSORRY, Rules, get_rules
from .state_io import state_to_dict


def cell_key(seat: int, code: int) -> str:
    """The page's key of the cell where a pawn of `seat` with position `code` stands."""
    code = int(code)
    if code == START:
        return f"start:{seat}"
    if code == HOME:
        return f"home:{seat}"
    if code >= SAFE0:
        return f"safe:{seat}:{code - SAFE0}"
    if 0 <= code < TRACK:
        return f"track:{code}"
    raise ValueError(f"no cell for pawn code {code}")


def _landing(seat: int, code: int, step: int) -> int:
    """Where a pawn lands `step` squares away (negative: backward), before any slide."""
    return int(FORWARD[seat, code, step] if step > 0 else BACKWARD[seat, code, -step])


def click_plan(state: np.ndarray, rules: Rules, action: int) -> list[str]:
    """The cell keys a person clicks, in order, to play the legal `action` (module docstring)."""
    rules = get_rules(rules)
    r = game.rules_array(rules)
    me = game.to_move(state)
    move_kind, i, j, first, t = game.decode_action(rules, action)

    def pawn(seat: int, slot: int, step: int = 0) -> str:
        """The cell of pawn `slot` of `seat`, or (`step` not 0) where it lands `step` squares away."""
        code = int(state[E.PAWNS + seat * E.MAX_SLOTS + slot])
        return cell_key(seat, _landing(seat, code, step) if step else code)

    if move_kind == "discard":
        return [f"discard:{CARD_NAMES[i]}"]
    if move_kind == "no_fire_move":  # Fire and Ice, before the draw: Pass declines the fire move
        return ["pass"]
    if move_kind == "fire_move":  # ... and a click on the fire pawn makes it
        return [pawn(*game.tokens(state)["fire"])]
    card = game.action_card(state, rules, action)
    if card is None:  # (only discards and fire decisions play no card: answered above)
        raise ValueError(f"action {action} plays no card")
    prefix = [f"card:{CARD_NAMES[card]}"] if rules.hand_size else []
    seat = (me + 2 * i) % 4  # (start and sorry: the seat whose Start the pawn leaves)
    if move_kind == "pass":
        return prefix + ["pass"]
    if move_kind == "start":
        return prefix + [f"start:{seat}", cell_key(seat, START_CIRCLE[seat])]
    if move_kind == "sorry":
        return prefix + [f"start:{seat}", pawn(*E.target_pawn(state, r, me, t))]
    seat, slot = E.movable_pawn(r, me, i)
    if move_kind == "swap":
        return prefix + [pawn(seat, slot), pawn(*E.target_pawn(state, r, me, t))]
    steps = {
        "move": int(E.CARD_STEP[card]) if card != CSORRY else rules.sorry_forward,
        "back1": -1,
        "seven_part": first,
    }
    if move_kind in steps:
        return prefix + [pawn(seat, slot), pawn(seat, slot, steps[move_kind])]
    # split: the second pawn's cell is where it stands before the seven (the first part can
    # neither bump nor slide onto an own pawn in a legal split).
    seat_j, slot_j = E.movable_pawn(r, me, j)
    return prefix + [pawn(seat, slot), pawn(seat, slot, first), pawn(seat_j, slot_j), pawn(seat_j, slot_j, 7 - first)]


class BoardPlayView(PlayView):
    """The board game at seat `viewer` (see the module docstring), from `state` on."""

    def __init__(self, board: Game, state: np.ndarray, viewer: int | None):
        super().__init__(board, viewer)
        self.rules: Rules = board.agent_rules
        self.labels = PawnLabels(state, self.rules)  # R1..R4: a pawn keeps its label all game

    def seat_name(self, seat: int) -> str:
        return COLOUR_NAMES[seat]

    def same_side(self, seat: int, winner: int) -> bool:
        return game.same_side(self.rules, seat, winner)

    def position(self, state: np.ndarray) -> str:
        rules = self.rules
        hand = self.viewer if rules.hand_size else None  # the viewer's hand is shown; the others' stay hidden
        return render_ansi(state, rules.pawns_per_player, self.labels, hand, rules.teams != "none", rules.fire_ice)

    def options(self, state: np.ndarray) -> list[tuple[int, str]]:
        return [(move["action"], move["description"]) for move in self.page_moves(state) if move["listed"]]

    def told(self, before: np.ndarray, action: int, after: np.ndarray, player: str | None) -> str:
        words = self.recorded(before, action, after)
        colour = COLOUR_NAMES[game.to_move(before)]
        if not words.startswith(colour):
            return words
        if player is None:  # "Red plays 5: ..." -> "You play 5: ..."
            return "You" + words[len(colour) :].replace(" plays ", " play ", 1).replace(" discards ", " discard ", 1)
        return f"{colour} ({player}){words[len(colour) :]}"  # "Yellow (heuristic) plays 5: ..."

    def recorded(self, before: np.ndarray, action: int, after: np.ndarray) -> str:
        """The move as replays record it ("Red plays 5: R1 moves ..."), advancing the labels:
        :meth:`told` builds on it, so each move advances them once either way."""
        return describe_move(before, self.rules, action, after, self.labels)

    def picture_labels(self) -> PawnLabels:
        return self.labels.copy()

    # ---- the browser page ------------------------------------------------------------------
    def page(self, state: np.ndarray) -> dict:
        return {**self.page_after(state), "tokens": self.token_text(state)}

    def page_after(self, state: np.ndarray) -> dict:
        """The state dict as the viewer may see it (other seats' hands withheld: null) and each
        seat's pawn labels in slot order (null for an empty seat)."""
        d = state_to_dict(state, self.rules)
        if "hands" in d:
            d["hands"] = [hand if seat == self.viewer else None for seat, hand in enumerate(d["hands"])]
        labels = [self.labels.seat_labels(s) if state[E.ACTIVE + s] else None for s in range(4)]
        return {"state": d, "labels": labels}

    def page_moves(self, state: np.ndarray) -> list[dict]:
        """Every legal move (each playable by its clicks; ``listed``: shown in the move list)."""
        # Of actions leading to the same position (e.g. a split seven's two orders), the move
        # list shows the first: each outcome once.
        listed = {group[0] for group in game.equivalent_actions(state, self.rules)}
        return [
            {
                "action": int(a),
                "kind": game.decode_action(self.rules, a)[0],
                "description": option_text(state, self.rules, a, self.labels),
                "clicks": click_plan(state, self.rules, a),
                "listed": int(a) in listed,
            }
            for a in game.legal_actions(state, self.rules)
        ]

    def page_move(self, before: np.ndarray, action: int) -> dict:
        card = game.action_card(before, self.rules, action)
        return {
            "colour": COLOUR_NAMES[game.to_move(before)],
            "card": CARD_NAMES[card] if card is not None else None,
            "clicks": click_plan(before, self.rules, action),
        }

    def token_text(self, state: np.ndarray) -> str | None:
        """Fire and Ice: where the tokens are, with the pawns' labels, as the drawn and text
        boards say it (:func:`sorry_env.board.render.token_text`; None under other rules). The
        moves that place a token say so in their descriptions; several moves may share the
        clicks of one pawn move and differ only in the token, and the page then asks which."""
        if not self.rules.fire_ice:
            return None
        return token_text(state, self.labels) + (
            " | fire move or Pass, before the draw" if game.fire_decision(state) else ""
        )
