"""The browser game of every registered game other than the board game (:mod:`sorry_env.games`),
over the registry's functional API: a person against agents, the position as the game's text
(``Game.render_text``, which leaves out what the person may not see) and the legal moves as a
list of texts (``Game.describe_action``). The board game keeps its own session with the drawn
board (:mod:`sorry_env.agents.play.serve.games`); both have the same interface, so the store,
the routes and the locks are shared.

What a client may pick for these games is the server's list, as for the board game: an
opponent is the *name* of one of the game's registered agents (``random``, ``greedy``, the
game's own agents of its ``GameType.agents_module``) with their default settings; settings,
policy files and ``module:Name`` are refused before anything is built. The game's own agents
may be searches, so their moves run in the search processes under the per-move time budget
(:mod:`sorry_env.agents.play.serve.workers`; the fallback is the generic greedy, else random);
the generic random and greedy answer in the request's thread.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from sorry_env import games
from sorry_env.agent import Agent, GameTurn
from sorry_env.agents import agents_of_game as agent_makers
from sorry_env.agents import make_agent
from sorry_env.agents.specs import ALIASES
from sorry_env.checks import excerpt

from .games import GameError, Session, Table
from .workers import MovePool, RemoteAgent

# The agents written for every game (sorry_env.agents.any_game): quick, so they answer in the
# request's thread. Every other agent of a game is its own, maybe a search: it plays in the pool.
IN_THREAD_AGENTS = ("random", "greedy")
# The hint agent of a game, and the fallback of its searches: the first of these it offers.
HINT_AGENTS = ("heuristic", "greedy", "random")
FALLBACK_AGENTS = ("greedy", "random")
MAX_OPPONENT_TEXT = 200  # characters, as for the board game's choices


@dataclasses.dataclass(frozen=True)
class GameChoice:
    """One offered agent of a game: its registered name, built with its default settings."""

    game_id: str
    name: str

    @property
    def in_thread(self) -> bool:
        return self.name in IN_THREAD_AGENTS

    def build(self, game: games.Game, pool: MovePool, seed: int) -> Agent:
        """The agent, from the server's own data: the game's registered maker of that name, or
        a move of it in the pool (a fallback agent playing when the pool does not answer)."""
        if self.in_thread:
            return make_agent(self.name, seed=seed, allow_code=False, game=game)
        fallback = make_agent(first_offered(self.game_id, FALLBACK_AGENTS), seed=seed, allow_code=False, game=game)
        return RemoteAgent(pool, self.name, (), seed=seed, game_id=self.game_id, fallback=fallback)


def first_offered(game_id: str, names: tuple[str, ...]) -> str:
    offered = agent_makers(game_id)
    return next(name for name in names if name in offered)


def offered_agents(game_id: str) -> list[str]:
    """The agent names a client may pick for a game (its registered agents), sorted."""
    return sorted(agent_makers(game_id))


def choose_agent(game: games.Game, text) -> GameChoice:
    """The offered agent `text` names for `game`; ValueError naming the choices otherwise.
    Looks nothing up on the disk and imports nothing a client names."""
    kind = game.game_type
    offered = offered_agents(kind.id)
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"an opponent must be one of {offered} (text), got {excerpt(text)}")
    if len(text) > MAX_OPPONENT_TEXT:
        raise ValueError(f"an opponent is at most {MAX_OPPONENT_TEXT} characters, got {len(text)}")
    name = ALIASES.get(text.strip(), text.strip())
    if name in offered:
        return GameChoice(kind.id, name)
    if name.partition(":")[0] in offered:
        raise ValueError(
            f"{kind.long_name}'s agents play with their default settings on this server: choose one of {offered}"
        )
    raise ValueError(f"unknown opponent {text!r} for {kind.long_name}: choose one of {offered}")


class AnyGameSession(Session):
    """One game of a registered game other than the board game: a person at `human_seat`
    against agents at the other seats (the interface of
    :class:`sorry_env.agents.play.serve.games.GameSession`)."""

    def __init__(self, session_id: str, game: games.Game, table: Table):
        super().__init__(session_id, table)
        self.game = game
        self.state = game.new_state(table.num_players, seed=table.seed)

    # ---- reading ------------------------------------------------------------------------
    @property
    def over(self) -> bool:
        return self.game.winner(self.state) is not None or self.game.turn(self.state) >= self.max_turns

    def legal_moves(self) -> list[dict]:
        """The person's legal moves in words (empty when it is not their turn)."""
        if self.over or self.game.to_move(self.state) != self.human_seat:
            return []
        return [
            {"action": int(a), "description": self.game.describe_action(self.state, int(a))}
            for a in self.game.legal_actions(self.state)
        ]

    def result(self) -> dict | None:
        if not self.over:
            return None
        kind, w = self.game.game_type, self.game.winner(self.state)
        if w is None:
            text = f"A draw: no one won within {self.max_turns} {kind.turn_unit}."
        else:
            text = "You win!" if w == self.human_seat else f"{kind.seat_names[w]} ({self.player_name(w)}) wins."
        return {"winner": w, "you_win": w == self.human_seat, "text": text}

    def view(self) -> dict:
        """Everything the page shows, as JSON: no state dict (a game's may hold what the person
        may not see), the position as the game draws it for the person instead."""
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
                {"seat": s, "name": kind.seat_names[s], "colour": kind.seat_colours[s], "player": self.player_name(s)}
                for s in self.game.seats(self.state)
            ],
            "text": self.game.render_text(self.state, self.human_seat),
            "over": self.over,
            "result": self.result(),
            "legal": self.legal_moves(),
            "hint_agent": self.hint_label,
            "log": self.log,
        }

    # ---- changing -----------------------------------------------------------------------
    def _apply(self, action: int, note: str | None = None) -> dict:
        """Play the legal `action` for the seat to move; the event describing it."""
        before = self.state
        seat = self.game.to_move(before)
        self.state = self.game.apply(before, action)  # checks legality once more
        self.version += 1
        kind = self.game.game_type
        text = f"{kind.seat_names[seat]} ({self.player_name(seat)}): {self.game.describe_action(before, action)}"
        passed = self.game.turn(self.state) - self.game.turn(before) - 1  # turns nobody could use
        if passed > 0:
            text += f" ({passed} {kind.turn_unit} then passed without a possible move)"
        entry = {
            "seat": seat,
            "name": kind.seat_names[seat],
            "player": self.player_name(seat),
            "action": int(action),
            "text": text + (f" ({note})" if note else ""),
            "turn": self.game.turn(before),
        }
        self.log.append(entry)
        return {**entry, "text_after": self.game.render_text(self.state, self.human_seat)}

    def advance(self) -> list[dict]:
        """The opponents' moves until it is the person's turn or the game ends."""
        events = []
        while not self.over and self.game.to_move(self.state) != self.human_seat:
            seat = self.game.to_move(self.state)
            legal = self.game.legal_actions(self.state)
            label, agent = self.opponents[seat]
            action = agent.act(self.agent_turn(self.rng, legal))
            if action not in legal:  # a server-side agent's fault: an error the operator sees
                raise RuntimeError(f"{label} chose action {action!r}, not one of {legal.tolist()}")
            events.append(self._apply(int(action), getattr(agent, "note", None)))
        return events

    def play(self, action, version=None) -> list[dict]:
        """The person's move, then the opponents' replies: the events, in order. Refused
        (GameError, game unchanged) when the game is over, it is not the person's turn,
        `version` is stale or `action` is not one of the legal moves."""
        self.check_move_request(version)
        legal = self.game.legal_actions(self.state)
        if action not in legal:
            raise GameError(f"illegal move: action {excerpt(action)} is not one of the legal {legal.tolist()}")
        return [self._apply(int(action))] + self.advance()

    def mover(self) -> int:
        return self.game.to_move(self.state)

    def seat_label(self, seat: int) -> str:
        return self.game.game_type.seat_names[seat]

    def agent_turn(self, rng: np.random.Generator, legal: np.ndarray) -> GameTurn:
        return GameTurn.from_state(self.game, self.state, rng, legal)
