"""The browser game's games, without the web layer: one :class:`Session` per game (a person
against agents, in any registered game) and a :class:`GameStore` that holds many at once,
each under its own lock, and forgets the ones left idle.

What the page shows of a game is the game's :meth:`sorry_env.games.Game.play_view`: the board
game's (:mod:`sorry_env.board.board_view`) gives the state dict, stable pawn labels and each legal
move's click plan for the drawn board; every other game's gives its position as text
(``Game.render_text``) and its moves in words (``Game.describe_action``).

A session only ever changes through :meth:`Session.play`, after the move has been checked
legal; every refusal raises :class:`GameError` before anything changes.
"""

from __future__ import annotations

import math
import os
import secrets
import threading
import time
from collections.abc import Callable

import numpy as np

from sorry_env import games
from sorry_env.agent import agent_turn
from sorry_env.agents import Agent
from sorry_env.checks import excerpt

from ..prompt import Table


class GameError(Exception):
    """A request a game refuses; `status` is the HTTP status the web layer answers with."""

    def __init__(self, message: str, status: int = 409):
        super().__init__(message)
        self.status = status


class Session(Table):
    """One game of a registered game in the browser: a person at `human_seat` against agents
    at the other seats (:class:`sorry_env.agents.play.prompt.Table`); `hint` (label, agent)
    answers the person's hints and `estimator` (a policy agent with a value network, or None)
    tells the person's win chance."""

    def __init__(
        self,
        session_id: str,
        game: games.Game,
        num_players: int,
        human_seat: int,
        opponents: dict[int, tuple[str, Agent]],
        seed: int,
        max_turns: int,
        hint: tuple[str, Agent],
        estimator=None,
    ):
        # Separate generators: asking for a hint must not change the opponents' play.
        super().__init__(game, num_players, human_seat, opponents, seed, max_turns, np.random.default_rng([seed, 0]))
        self.hint_rng = np.random.default_rng([seed, 1])
        self.id, self.estimator = session_id, estimator
        self.hint_label, self.hint_agent = hint
        self.version = 0  # moves applied so far; a move request may name it to refuse stale clicks
        self.log: list[dict] = []
        self.lock = threading.Lock()
        self.last_used = 0.0

    # ---- reading ------------------------------------------------------------------------
    def legal_moves(self) -> list[dict]:
        """The person's legal moves as the page offers them (empty when it is not their turn)."""
        if self.over or self.mover() != self.human_seat:
            return []
        return self.shown.page_moves(self.state)

    def result(self) -> dict | None:
        if not self.over:
            return None
        w = self.game.winner(self.state)
        return {
            "winner": w,
            "you_win": w is not None and self.shown.same_side(self.human_seat, w),
            "text": self.result_text(),
        }

    def estimate(self) -> dict | None:
        """The estimator's win chance for the person while it is their turn (None otherwise):
        read from the person's own observation, so it reveals nothing hidden."""
        if self.estimator is None or self.over or self.mover() != self.human_seat:
            return None
        chance = self.estimator.win_chance(self.state, self.game.agent_rules, self.human_seat)
        return {"agent": os.path.basename(self.estimator.path), "win_chance": chance}

    def view(self) -> dict:
        """Everything the page shows, as JSON (the position as the game's play view gives it:
        no state dict a game has not made fit to show, which may hold what the person may not see)."""
        kind = self.game.game_type
        return {
            "id": self.id,
            "game": kind.id,
            "long_name": kind.long_name,
            "rules": self.game.variant_name,
            "players": self.num_players,
            "seed": self.seed,
            "you": self.human_seat,
            "version": self.version,
            "max_turns": self.max_turns,
            "turn_unit": kind.turn_unit,
            "turn": self.game.turn(self.state),
            "seats": [
                {
                    "seat": s,
                    "name": self.shown.seat_name(s),
                    "colour": kind.seat_colours[s],
                    "player": self.player_name(s),
                }
                for s in self.game.seats(self.state)
            ],
            **self.shown.page(self.state),
            "over": self.over,
            "result": self.result(),
            "legal": self.legal_moves(),
            "hint_agent": self.hint_label,
            "estimate": self.estimate(),
            "log": self.log,
        }

    def answer(self, events: list[dict]) -> dict:
        """A request's answer after `events` (the moves just played): the game's view and them."""
        return {"game": self.view(), "events": events}

    def hint(self) -> dict:
        """The hint agent's choice for the person's move (the game does not change)."""
        legal = self.legal_moves()
        if not legal:
            raise GameError("no hint: it is not your turn" if not self.over else "no hint: the game is over")
        actions = np.array([m["action"] for m in legal], dtype=np.int64)
        action = int(self.hint_agent.act(agent_turn(self.game, self.state, self.hint_rng, actions)))
        move = next(m for m in legal if m["action"] == action)
        note = getattr(self.hint_agent, "note", None)  # a search over its time budget
        return {"agent": self.hint_label, "version": self.version, "note": note, **move}

    # ---- changing -----------------------------------------------------------------------
    def _apply(self, action: int, note: str | None = None) -> dict:
        """Play the legal `action` for the seat to move; the event describing it."""
        seat, facts = self.mover(), self.shown.page_move(self.state, action)
        before = self.move(action)
        self.version += 1
        player = self.player_name(seat)
        entry = {
            "seat": seat,
            "player": player,
            "action": int(action),
            # (a note: a search over its time budget, serve.workers)
            "text": self.shown.told(before, action, self.state, player) + (f" ({note})" if note else ""),
            "turn": self.game.turn(before),
            **facts,
        }
        self.log.append(entry)
        return {**entry, **self.shown.page_after(self.state)}

    def advance(self) -> list[dict]:
        """The opponents' moves until it is the person's turn or the game ends."""
        events = []
        while not self.over and self.mover() != self.human_seat:
            agent = self.opponents[self.mover()][1]
            # (an illegal choice is a server-side agent's fault: Quit, an error the operator sees)
            events.append(self._apply(self.opponent_action(), getattr(agent, "note", None)))
        return events

    def play(self, action, version=None) -> list[dict]:
        """The person's move, then the opponents' replies: the events, in order. Refused
        (GameError, game unchanged) when the game is over, it is not the person's turn,
        `version` is stale or `action` is not one of the legal moves."""
        if self.over:
            raise GameError("the game is over: " + self.result()["text"])  # type: ignore[index]
        if self.mover() != self.human_seat:
            raise GameError(f"it is {self.shown.seat_name(self.mover())}'s turn, not yours")
        if version is not None and version != self.version:
            raise GameError(f"stale move: it was chosen at version {version}, the game is at version {self.version}")
        legal = self.game.legal_actions(self.state)
        if action not in legal:
            size = self.game.num_actions
            where = "" if 0 <= action < size else f" (out of range: the actions are 0..{size - 1})"
            raise GameError(f"illegal move: action {excerpt(action)} is not one of the legal {legal.tolist()}{where}")
        return [self._apply(int(action))] + self.advance()


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
        self._games: dict[str, Session] = {}
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
        """GameError (429, 503) unless a new game of `client` fits; with `evict`, forget the client's least
        recently used idle game when it holds its share (the lock is held)."""
        own = [gid for gid, c in self._clients.items() if c == client]
        if self.per_client is not None and len(own) >= self.per_client:
            idle = [gid for gid in own if not self._games[gid].lock.locked()]
            if not idle:
                raise GameError(f"you are playing {len(own)} games at once, the most one client may; finish one", 429)
            if evict:
                self._forget(min(idle, key=lambda gid: self._games[gid].last_used))
            return
        if len(self._games) >= self.max_games:
            raise GameError(f"the server holds its maximum of {self.max_games} games; try again when one expires", 503)

    def check_room(self, client: str = "") -> None:
        """GameError (429, 503) unless a new game of `client` would fit now: checked before its agents are
        built (a full server refuses at once, without loading anything)."""
        self.purge()
        with self._lock:
            self._make_room(client, evict=False)

    def add(self, session: Session, client: str = "") -> None:
        self.purge()
        with self._lock:
            self._make_room(client, evict=True)
            session.last_used = self.clock()
            self._games[session.id] = session
            self._clients[session.id] = client

    def get(self, game_id: str) -> Session:
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
