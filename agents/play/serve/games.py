"""The browser game's games, without the web layer: one :class:`GameSession` per game (a
person against agents) and a :class:`GameStore` that holds many at once, each under its own
lock, and forgets the ones left idle.

A session only ever changes through :meth:`GameSession.play`, after the move has been checked
legal; every refusal raises :class:`GameError` before anything changes.

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

import math
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from sorry_env import engine as E
from sorry_env import game
from sorry_env.agents import Turn
from sorry_env.agents.base import Agent
from sorry_env.geometry import BACKWARD, FORWARD, HOME, SAFE0, START, START_CIRCLE, TRACK
from sorry_env.narrate import PawnLabels, narrate, option_text
from sorry_env.render import COLOUR_NAMES
from sorry_env.rules import CARD_NAMES, CSORRY, Rules, get_rules
from sorry_env.state_io import state_to_dict


class GameError(Exception):
    """A request a game refuses; `status` is the HTTP status the web layer answers with."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


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


def _pawn_code(state: np.ndarray, seat: int, slot: int) -> int:
    return int(state[E.PAWNS + seat * E.MAX_SLOTS + slot])


def _landing(seat: int, code: int, step: int) -> int:
    """Where a pawn lands `step` squares away (negative: backward), before any slide."""
    return int(FORWARD[seat, code, step] if step > 0 else BACKWARD[seat, code, -step])


def click_plan(state: np.ndarray, rules: Rules, action: int) -> list[str]:
    """The cell keys a person clicks, in order, to play the legal `action` (module docstring)."""
    rules = get_rules(rules)
    r = game.rules_array(rules)
    me = game.to_move(state)
    kind, i, j, first, t = game.decode_action(rules, action)
    if kind == "discard":
        return [f"discard:{CARD_NAMES[i]}"]
    if kind == "no_fire_move":  # Fire and Ice, before the draw: Pass declines the fire move
        return ["pass"]
    if kind == "fire_move":  # ... and a click on the fire pawn makes it
        seat, slot = game.tokens(state)["fire"]
        return [cell_key(seat, _pawn_code(state, seat, slot))]
    card = game.action_card(state, rules, action)
    prefix = [f"card:{CARD_NAMES[card]}"] if rules.hand_size else []
    if kind == "pass":
        return prefix + ["pass"]
    if kind == "start":
        seat = (me + 2 * i) % 4
        return prefix + [f"start:{seat}", cell_key(seat, START_CIRCLE[seat])]
    if kind == "sorry":
        seat = (me + 2 * i) % 4
        target_seat, target_slot = E.target_pawn(state, r, me, t)
        return prefix + [f"start:{seat}", cell_key(target_seat, _pawn_code(state, target_seat, target_slot))]
    seat, slot = E.movable_pawn(r, me, i)
    code = _pawn_code(state, seat, slot)
    pawn = cell_key(seat, code)
    if kind == "swap":
        target_seat, target_slot = E.target_pawn(state, r, me, t)
        return prefix + [pawn, cell_key(target_seat, _pawn_code(state, target_seat, target_slot))]
    if kind == "move":
        step = int(E.CARD_STEP[card]) if card != CSORRY else rules.sorry_forward
        return prefix + [pawn, cell_key(seat, _landing(seat, code, step))]
    if kind == "back1":
        return prefix + [pawn, cell_key(seat, _landing(seat, code, -1))]
    if kind == "seven_part":
        return prefix + [pawn, cell_key(seat, _landing(seat, code, first))]
    # split: the second pawn's cell is where it stands before the seven (the first part can
    # neither bump nor slide onto an own pawn in a legal split).
    seat_j, slot_j = E.movable_pawn(r, me, j)
    code_j = _pawn_code(state, seat_j, slot_j)
    return prefix + [
        pawn,
        cell_key(seat, _landing(seat, code, first)),
        cell_key(seat_j, code_j),
        cell_key(seat_j, _landing(seat_j, code_j, 7 - first)),
    ]


@dataclass(frozen=True)
class Table:
    """Who sits where in a new game, whichever game it is: the person's seat, the labelled
    agents at the others, the hint agent, the seed and the turn limit."""

    num_players: int
    human_seat: int
    opponents: dict[int, tuple[str, Agent]]  # seat -> (label, agent)
    seed: int
    hint_agent: tuple[str, Agent]  # (label, agent)
    max_turns: int


class Session:
    """What every game a person plays on the server has (the board game's
    :class:`GameSession` and other games' ``agents.play.serve.any_game.AnyGameSession``): its
    id, seats, agents, generators, move count, log, lock and the time it was last used."""

    def __init__(self, session_id: str, table: Table):
        self.id = session_id
        self.num_players = table.num_players
        self.human_seat = table.human_seat
        self.opponents = table.opponents
        self.seed = table.seed
        self.hint_label, self.hint_agent = table.hint_agent
        self.max_turns = table.max_turns
        # Separate generators: asking for a hint must not change the opponents' play.
        self.rng = np.random.default_rng([table.seed, 0])
        self.hint_rng = np.random.default_rng([table.seed, 1])
        self.version = 0  # moves applied so far; a move request may name it to refuse stale clicks
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.last_used = 0.0

    def player_name(self, seat: int) -> str:
        return "you" if seat == self.human_seat else self.opponents[seat][0]

    # What each game's session says: ------------------------------------------------------
    over: bool

    def mover(self) -> int:
        """The seat to move."""
        raise NotImplementedError

    def seat_label(self, seat: int) -> str:
        """A seat as the game names it (the board game: its colour)."""
        raise NotImplementedError

    def agent_turn(self, rng: np.random.Generator, legal: np.ndarray):
        """What an agent sees of the position (its hidden parts re-drawn from `rng`)."""
        raise NotImplementedError

    def legal_moves(self) -> list[dict]:
        raise NotImplementedError

    def result(self) -> dict | None:
        raise NotImplementedError

    # ... and what follows from it, for every game: ----------------------------------------
    def check_move_request(self, version) -> None:
        """GameError unless the person may move now: the game runs, it is their turn and the
        move was chosen at this `version` (or names none)."""
        if self.over:
            raise GameError("the game is over: " + self.result()["text"])  # type: ignore[index]
        if self.mover() != self.human_seat:
            raise GameError(f"it is {self.seat_label(self.mover())}'s turn, not yours")
        if version is not None and version != self.version:
            raise GameError(f"stale move: it was chosen at version {version}, the game is at version {self.version}")

    def hint(self) -> dict:
        """The hint agent's choice for the person's move (the game does not change)."""
        legal = self.legal_moves()
        if not legal:
            raise GameError("no hint: it is not your turn" if not self.over else "no hint: the game is over")
        actions = np.array([m["action"] for m in legal], dtype=np.int64)
        action = int(self.hint_agent.act(self.agent_turn(self.hint_rng, actions)))
        move = next(m for m in legal if m["action"] == action)
        note = getattr(self.hint_agent, "note", None)  # a search over its time budget
        return {"agent": self.hint_label, "version": self.version, "note": note, **move}


class GameSession(Session):
    """One game of the board game: a person at `human_seat` against agents at the other seats."""

    def __init__(self, game_id: str, rules: Rules, table: Table, estimator=None):
        super().__init__(game_id, table)
        self.rules = rules
        self.estimator = estimator  # a PolicyAgent with a value network: your win chance, or None
        self.state = game.new_state(rules, table.num_players, seed=table.seed)
        self.labels = PawnLabels(self.state, rules)  # R1..R4: a pawn keeps its label all game

    # ---- reading ------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return game.winner(self.state) is not None or int(self.state[E.TURN]) >= self.max_turns

    def public_state(self, state: np.ndarray | None = None) -> dict:
        """The state dict as the person may see it: other seats' hands withheld (null)."""
        d = state_to_dict(self.state if state is None else state, self.rules)
        if "hands" in d:
            d["hands"] = [hand if seat == self.human_seat else None for seat, hand in enumerate(d["hands"])]
        return d

    def pawn_labels(self) -> list:
        """Each seat's pawn labels in slot order (null for an empty seat)."""
        return [self.labels.seat_labels(s) if self.state[E.ACTIVE + s] else None for s in range(4)]

    def legal_moves(self) -> list[dict]:
        """The person's legal moves (empty when it is not their turn)."""
        if self.over or game.to_move(self.state) != self.human_seat:
            return []
        # listed: the first of the actions reaching the same position (the move list shows each
        # outcome once; every order stays playable by clicks).
        firsts = {group[0] for group in game.equivalent_actions(self.state, self.rules)}
        return [
            {
                "action": int(a),
                "kind": game.decode_action(self.rules, a)[0],
                "description": option_text(self.state, self.rules, a, self.labels),
                "clicks": click_plan(self.state, self.rules, a),
                "listed": int(a) in firsts,
            }
            for a in game.legal_actions(self.state, self.rules)
        ]

    def result(self) -> dict | None:
        if not self.over:
            return None
        w = game.winner(self.state)
        if w is None:
            return {"winner": None, "you_win": False, "text": f"A draw: no one finished within {self.max_turns} cards."}
        mine = game.same_side(self.rules, self.human_seat, w)
        if w == self.human_seat:
            text = "You win!"
        elif mine:
            text = f"Your team wins ({COLOUR_NAMES[w]} finished)."
        else:
            text = f"{COLOUR_NAMES[w]} ({self.player_name(w)}) wins."
        return {"winner": w, "you_win": mine, "text": text}

    def estimate(self) -> dict | None:
        """The estimator's win chance for the person while it is their turn (None otherwise):
        read from the person's own observation, so it reveals nothing hidden."""
        if self.estimator is None or self.over or game.to_move(self.state) != self.human_seat:
            return None
        chance = self.estimator.win_chance(self.state, self.rules, self.human_seat)
        return {"agent": os.path.basename(self.estimator.path), "win_chance": chance}

    def view(self) -> dict:
        """Everything the page shows, as JSON."""
        seats = game.seats(self.state)
        return {
            "id": self.id,
            "rules": self.rules.name,
            "players": self.num_players,
            "seed": self.seed,
            "you": self.human_seat,
            "version": self.version,
            "max_turns": self.max_turns,
            "seats": [{"seat": s, "colour": COLOUR_NAMES[s], "player": self.player_name(s)} for s in seats],
            "state": self.public_state(),
            "labels": self.pawn_labels(),
            "over": self.over,
            "result": self.result(),
            "legal": self.legal_moves(),
            "hint_agent": self.hint_label,
            "estimate": self.estimate(),
            "tokens": self.token_text(),
            "log": self.log,
        }

    def token_text(self) -> str | None:
        """Fire and Ice: where the tokens are, in words (None under other rules). The moves
        that place a token say so in their descriptions; several moves may share the clicks
        of one pawn move and differ only in the token, and the page then asks which."""
        if not self.rules.fire_ice:
            return None
        parts = []
        for name, where in game.tokens(self.state).items():
            if where is None:
                parts.append(f"{name.capitalize()} is in the middle")
            else:
                seat, slot = where
                parts.append(f"{name.capitalize()} is on {COLOUR_NAMES[seat]} {self.labels.seat_labels(seat)[slot]}")
        if game.fire_decision(self.state):
            parts.append("fire move or Pass, before the draw")
        return "; ".join(parts) + "."

    # ---- changing -----------------------------------------------------------------------
    def _apply(self, action: int) -> dict:
        """Play the legal `action` for the seat to move; the event describing it."""
        before = self.state
        seat = game.to_move(before)
        card = game.action_card(before, self.rules, action)
        clicks = click_plan(before, self.rules, action)
        self.state = game.step(before, self.rules, action)  # checks legality once more
        self.version += 1
        move = self.labels.advance(before, action, self.state)
        words = narrate(before, self.rules, action, move, self.labels.previous)
        colour = COLOUR_NAMES[seat]
        # "Yellow plays 5: ..." becomes "Yellow (heuristic) plays 5: ...".
        text = f"{colour} ({self.player_name(seat)}){words[len(colour) :]}" if words.startswith(colour) else words
        entry = {
            "seat": seat,
            "colour": colour,
            "player": self.player_name(seat),
            "card": CARD_NAMES[card] if card is not None else None,
            "action": int(action),
            "text": text,
            "clicks": clicks,
            "turn": int(before[E.TURN]),
        }
        self.log.append(entry)
        return {**entry, "state": self.public_state(), "labels": self.pawn_labels()}

    def advance(self) -> list[dict]:
        """The opponents' moves until it is the person's turn or the game ends."""
        events = []
        while not self.over and game.to_move(self.state) != self.human_seat:
            seat = game.to_move(self.state)
            legal = game.legal_actions(self.state, self.rules)
            agent = self.opponents[seat][1]
            action = agent.act(self.agent_turn(self.rng, legal))
            event = self._apply(int(action))
            note = getattr(agent, "note", None)  # a search over its time budget (agents.play.serve.workers)
            if note:
                event["text"] += f" ({note})"
                self.log[-1]["text"] = event["text"]
            events.append(event)
        return events

    def play(self, action, version=None) -> list[dict]:
        """The person's move, then the opponents' replies: the events, in order. Refused
        (GameError, game unchanged) when the game is over, it is not the person's turn,
        `version` is stale or `action` is not one of the legal moves."""
        self.check_move_request(version)
        try:
            action = game.check_action(self.state, self.rules, action)
        except ValueError as exc:
            raise GameError(f"illegal move: {exc}") from None
        return [self._apply(action)] + self.advance()

    def mover(self) -> int:
        return game.to_move(self.state)

    def seat_label(self, seat: int) -> str:
        return COLOUR_NAMES[seat]

    def agent_turn(self, rng: np.random.Generator, legal: np.ndarray) -> Turn:
        return Turn.from_state(self.state, self.rules, rng, legal)


class StoreFull(GameError):
    def __init__(self, cap: int, per_client: bool = False):
        if per_client:
            super().__init__(f"you are playing {cap} games at once, the most one client may; finish one", status=429)
        else:
            super().__init__(f"the server holds its maximum of {cap} games; try again when one expires", status=503)


class GameStore:
    """Games by id. A game idle for longer than `ttl` seconds is forgotten (checked on every
    access and every new game); at most `max_games` games are held at once, and at most
    `per_client` of them for one client (an address): a client at its share has its least
    recently used game forgotten to make room for a new one, so a person starting game after
    game never gets stuck and no client can take the slots of others (None: no share, as
    for one local player; sorry-serve gives each client a quarter of the games)."""

    def __init__(
        self,
        ttl: float = 30 * 60,
        max_games: int = 64,
        clock: Callable[[], float] = time.monotonic,
        per_client: int | None = None,
    ):
        if not (isinstance(ttl, (int, float)) and math.isfinite(ttl) and ttl > 0) or max_games < 1:
            raise ValueError(f"ttl must be positive and max_games at least 1, got {ttl} and {max_games}")
        if per_client is not None and not 1 <= per_client <= max_games:
            raise ValueError(f"per_client must be 1..max_games ({max_games}), got {per_client}")
        self.ttl, self.max_games, self.per_client, self.clock = ttl, max_games, per_client, clock
        self._games: dict[str, GameSession] = {}
        self._clients: dict[str, str] = {}  # game id -> the client that made it
        self._lock = threading.Lock()

    def new_id(self) -> str:
        return secrets.token_urlsafe(9)

    def purge(self) -> list[str]:
        """Forget the games idle for longer than the ttl; their ids."""
        now = self.clock()
        with self._lock:
            gone = [gid for gid, g in self._games.items() if now - g.last_used > self.ttl and not g.lock.locked()]
            for gid in gone:
                self._forget(gid)
        return gone

    def _forget(self, game_id: str) -> None:
        self._games.pop(game_id, None)
        self._clients.pop(game_id, None)

    def _make_room(self, client: str, evict: bool) -> None:
        """StoreFull unless a new game of `client` fits; with `evict`, forget the client's least
        recently used idle game when it holds its share (the lock is held)."""
        own = [gid for gid, c in self._clients.items() if c == client]
        if self.per_client is not None and len(own) >= self.per_client:
            idle = [gid for gid in own if not self._games[gid].lock.locked()]
            if not idle:
                raise StoreFull(self.per_client, per_client=True)
            if evict:
                self._forget(min(idle, key=lambda gid: self._games[gid].last_used))
            return
        if len(self._games) >= self.max_games:
            raise StoreFull(self.max_games)

    def check_room(self, client: str = "") -> None:
        """StoreFull unless a new game of `client` would fit now: checked before its agents are
        built (a full server refuses at once, without loading anything)."""
        self.purge()
        with self._lock:
            self._make_room(client, evict=False)

    def add(self, session: GameSession, client: str = "") -> None:
        self.purge()
        with self._lock:
            self._make_room(client, evict=True)
            session.last_used = self.clock()
            self._games[session.id] = session
            self._clients[session.id] = client

    def get(self, game_id: str) -> GameSession:
        """The game with this id (marked used now), or GameError 404."""
        self.purge()
        with self._lock:
            session = self._games.get(game_id)
            if session is None:
                raise GameError(
                    f"no game {game_id[:40]!r} (unknown, finished and deleted, or expired after "
                    f"{self.ttl / 60:g} idle minutes)",
                    status=404,
                )
            session.last_used = self.clock()
            return session

    def delete(self, game_id: str) -> None:
        self.get(game_id)
        with self._lock:
            self._forget(game_id)

    def __len__(self) -> int:
        with self._lock:
            return len(self._games)
