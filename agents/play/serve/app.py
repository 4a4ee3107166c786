"""The browser game's web layer: a Starlette app serving the page and a JSON API.

Routes (every error is JSON ``{"error": message}`` with a 4xx/5xx status, and a refused
request never changes a game):

=======================================  ====================================================
``GET /``                                the page (static files under ``/static/``)
``GET /api/layout``                      the board geometry (:func:`sorry_env.board.board_layout.layout`)
``GET /api/options``                     the board game's menu (presets with their player
                                         counts, the agents a client may pick and their
                                         settings' caps, the hint agent, the defaults), the
                                         policies on offer and every other game's menu
                                         (``games``), each written by one method
``POST /api/games``                      a new game: ``{"game"?, "players", "rules",
                                         "opponents", "seat"?, "seed"?}`` -> 201
                                         ``{"game", "events"}`` (``"game"``: a registered
                                         game's id, default the first, the board game)
``GET /api/games/{id}``                  ``{"game": view}``
``POST /api/games/{id}/move``            ``{"action", "version"?}`` -> ``{"game", "events"}``
``GET /api/games/{id}/hint``             ``{"hint": {"action", "description", "clicks", ...}}``
``DELETE /api/games/{id}``               forget the game
=======================================  ====================================================

Every request first passes :class:`sorry_env.agents.play.serve.guard.RequestGuard` (Host, Origin, content
type) and bodies are read by :func:`sorry_env.agents.play.serve.guard.read_json` (size, depth, digits). An
opponent is one of the server's choices (:mod:`sorry_env.agents.play.serve.opponents`): a client's text is
never handed to :func:`agents.make_agent` or to the file system. Moves are made in worker
threads (search moves in the processes of :mod:`sorry_env.agents.play.serve.workers`, under a time budget),
so one game's slow opponent never holds up another game or the event loop; each game's lock
makes its requests take turns.
"""

from __future__ import annotations

import contextlib
import functools
import pathlib
import secrets
import sys
import traceback
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sorry_env import games
from sorry_env.agents import catalog, make_agent
from sorry_env.board import board_layout, game
from sorry_env.checks import excerpt

from ..prompt import first_offered, is_int, seat_opponents
from .games import GameError, GameStore, Session
from .guard import LOOPBACK_NAMES, MAX_BODY, RequestGuard, read_json
from .opponents import OpponentMenu, offered_agents, parse_agent
from .workers import MovePool

STATIC = pathlib.Path(__file__).parent / "static"
# The shipped policies: checkpoints/ beside the package in a source checkout (agents.catalog).
DEFAULT_CHECKPOINTS = catalog.checkpoints_dir()
DEFAULT_HINT_AGENT = "montecarlo"  # the strongest search agent on the ladder (docs/agents.md: 56.0% vs the heuristic)
CREATE_KEYS = {"game", "players", "rules", "opponents", "seat", "seed"}
MAX_NAME = 40  # characters of a game id or rules name
MOVE_KEYS = {"action", "version"}
SEED_LIMIT = 2**32  # a client's seed is 0 <= seed < SEED_LIMIT (the agents' seeds are derived from it)
DEFAULT_MOVE_BUDGET = 5.0  # seconds a search move may take (the caps keep one under a second)
DEFAULT_WORKERS = 2  # search processes
__all__ = ["MAX_BODY", "DEFAULT_CHECKPOINTS", "DEFAULT_HINT_AGENT", "GameServer", "create_app"]


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


class GameServer:
    """The store of games plus what a new game needs: the opponents on offer, the hint agent
    and the pool that runs search moves."""

    def __init__(
        self,
        store: GameStore,
        checkpoints: pathlib.Path | None,
        hint_agent: str,
        max_turns: int | None = None,
        pool: MovePool | None = None,
    ):
        # The hint agent is the operator's (typed on the command line): make_agent may build
        # it, and a bad spec is refused at start-up, not at the first hint.
        make_agent(hint_agent)
        # A registered agent answers clients' hints like an opponent: within the same caps.
        self.hint_choice = parse_agent(games.load_game(games.default_game_id()), hint_agent)
        self.store = store
        self.hint_spec = hint_agent
        self.max_turns = max_turns  # None: every game's own limit
        self.pool = pool if pool is not None else MovePool()
        self.menu = OpponentMenu(checkpoints, self.pool)  # the files are listed once, here

    def options(self) -> dict:
        """What the page of the drawn game offers (the default game's options, its policies on
        offer, the move budget) and, under ``games``, every registered game shown as text."""
        return {
            **self.game_options(games.default_game_id()),
            "policies": [
                {k: p[k] for k in ("spec", "name", "rules", "players", "shipped")} for p in self.menu.policies
            ],
            "trained": catalog.TRAINED,
            "move_budget": self.pool.budget,
            "seed_limit": SEED_LIMIT,
            "games": [
                self.game_options(i) for i, played in games.registered_games().items() if not played.game_type.can_draw
            ],
        }

    def game_options(self, game_id: str) -> dict:
        """What a client may choose in a new game of the registered game `game_id`: its
        variants (``rules``; ``presets``: each with its player counts and their seats in play),
        player counts, the agents offered (``agents``, their settings' caps ``settings``), its
        hint agent and the defaults."""
        kind = games.game_type(game_id)
        offered = offered_agents(games.load_game(game_id))
        presets = []
        for variant in kind.variants:
            played = games.load_game(game_id, variant)
            seats = {}
            for n in kind.player_counts:
                with contextlib.suppress(ValueError):  # (team rules seat four players only)
                    seats[str(n)] = list(played.seats(played.new_state(n)))
            presets.append({"name": variant, "players": [int(n) for n in seats], "seats": seats})
        return {
            "id": kind.id,
            "long_name": kind.long_name,
            "rules": list(kind.variants),
            "presets": presets,
            "players": list(kind.player_counts),
            "seat_names": list(kind.seat_names),
            "max_turns": self.max_turns or kind.max_turns,
            "turn_unit": kind.turn_unit,
            "agents": list(offered),
            "settings": offered,
            "hint_agent": self._hint_spec(kind),
            "defaults": {
                "players": kind.player_counts[0],
                "rules": kind.default_variant,
                "opponents": [first_offered(kind.id)],
            },
        }

    def create(self, body: dict) -> Session:
        """A new game from a request body, every field checked first (ValueError)."""
        unknown = set(body) - CREATE_KEYS
        if unknown:
            raise ValueError(f"unknown fields {excerpt(sorted(unknown))}; a new game takes {sorted(CREATE_KEYS)}")
        game_id = _name(body, "game", games.default_game_id(), "a registered game's id")
        kind = games.game_type(game_id)  # ValueError naming the registered games
        rule_sets = f"one of {kind.long_name}'s rule sets {list(kind.variants)}"
        variant = _name(body, "rules", kind.default_variant, rule_sets)
        played = games.load_game(game_id, variant)  # ValueError naming its variants
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(2**31)
        game.check_seed(seed)
        if seed >= SEED_LIMIT:
            raise ValueError(f"seed must be below {SEED_LIMIT}, got {excerpt(seed)}")
        specs = body.get("opponents", [first_offered(game_id)])  # one text for all or one each
        if not isinstance(specs, (list, str)):
            raise ValueError(f"opponents must be a list of agent names, got {excerpt(specs)}")
        players, seat, opponents = seat_opponents(
            played,
            body.get("players", kind.player_counts[0]),
            body.get("seat"),
            [specs] if isinstance(specs, str) else specs,
            seed,
            functools.partial(self.menu.choose, played),
        )
        hint = self._hint(played, players, seed + 99)
        max_turns = self.max_turns or kind.max_turns
        return Session(
            self.store.new_id(),
            played,
            players,
            seat,
            opponents,
            seed,
            max_turns,
            hint,
            self.menu.estimator(played, players),
        )

    def _hint(self, played: games.Game, players: int, seed: int) -> tuple:
        """(label, agent) answering hints: the operator's hint agent for a game whose policies
        ship (a registered agent within the caps, like an opponent), else the first quick agent
        the game offers (prompt.QUICK_AGENTS)."""
        if played.game_type.shipped_policies and self.hint_choice is None:  # the operator's own file or module:Name
            return self.hint_spec, make_agent(self.hint_spec, seed=seed)
        return self.menu.choose(played, self._hint_spec(played.game_type), players, seed)

    def _hint_spec(self, kind: games.GameType) -> str:
        return self.hint_spec if kind.shipped_policies else first_offered(kind.id)


def _name(body: dict, key: str, default: str, what: str) -> str:
    """The name `key` of a new game's body (`default` when absent); TypeError unless it is text
    of at most MAX_NAME characters (`what` says what it must be)."""
    value = body.get(key, default)
    if not isinstance(value, str) or len(value) > MAX_NAME:
        raise TypeError(f"{key} must be {what}, got {excerpt(value)}")
    return value


def create_app(
    store: GameStore | None = None,
    checkpoints: pathlib.Path | None = DEFAULT_CHECKPOINTS,
    hint_agent: str = DEFAULT_HINT_AGENT,
    max_turns: int | None = None,
    hosts: frozenset[str] | tuple[str, ...] = LOOPBACK_NAMES,
    workers: int = DEFAULT_WORKERS,
    move_budget: float = DEFAULT_MOVE_BUDGET,
) -> Starlette:
    """The ASGI app. `store` holds the games (its ttl and cap); `checkpoints` is the folder
    whose policy files are offered as opponents (listed now, once); `hint_agent` answers
    hints; `hosts` are the names a request's Host may give (agents.play.serve.guard); `workers`
    search processes play search moves within `move_budget` seconds each."""
    pool = MovePool(workers, move_budget)
    server = GameServer(store if store is not None else GameStore(), checkpoints, hint_agent, max_turns, pool)

    async def options(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(server.options))

    async def create(request: Request) -> Response:
        body = await read_json(request)
        client = request.client.host if request.client else ""
        server.store.check_room(client)  # a full server refuses (503) before any agent is built
        try:
            session = await run_in_threadpool(server.create, body)
        except (ValueError, TypeError) as exc:
            return _error(str(exc), 422)

        def start():
            with session.lock:
                server.store.add(session, client)  # checked again: another request may have filled it
                return session.answer(session.advance())  # the opponents may move first

        return JSONResponse(await run_in_threadpool(start), status_code=201)

    def on_game(work):
        """A route on one game: ``work(session, body)`` (a POST's body, else {}) run under the
        game's lock in a worker thread, its answer as JSON."""

        async def route(request: Request) -> Response:
            session = server.store.get(request.path_params["game_id"])
            body = await read_json(request) if request.method == "POST" else {}

            def run():
                with session.lock:
                    return work(session, body)

            return JSONResponse(await run_in_threadpool(run))

        return route

    async def delete(request: Request) -> Response:
        server.store.delete(request.path_params["game_id"])
        return JSONResponse({"deleted": request.path_params["game_id"]})

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            pool.close()  # the search workers stop with the server

    routes = [
        Route("/", lambda request: FileResponse(STATIC / "index.html")),
        Route("/api/layout", lambda request: JSONResponse(board_layout.layout())),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", on_game(lambda session, _: {"game": session.view()}), methods=["GET"]),
        Route("/api/games/{game_id}", delete, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", on_game(_move), methods=["POST"]),
        Route("/api/games/{game_id}/hint", on_game(lambda session, _: {"hint": session.hint()}), methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers: dict[Any, Any] = dict.fromkeys((GameError, HTTPException, Exception), _error_answer)
    guard = Middleware(RequestGuard, hosts=frozenset(hosts))
    app = Starlette(routes=routes, exception_handlers=handlers, middleware=[guard], lifespan=lifespan)
    app.state.server = server
    return app


def _move(session: Session, body: dict) -> dict:
    """The person's move of a move request's body (``{"action", "version"?}``) and the
    opponents' replies; GameError (422) naming what is wrong with the body."""
    unknown = set(body) - MOVE_KEYS
    if unknown or "action" not in body:
        raise GameError(f'a move is {{"action": index, "version": n (optional)}}, got {excerpt(body)}', status=422)
    action, version = body["action"], body.get("version")
    if not is_int(action) or (version is not None and not is_int(version)):
        raise GameError(
            f"action and version must be integers, got {excerpt(action)} and {excerpt(version)}", status=422
        )
    return session.answer(session.play(action, version))


async def _error_answer(request: Request, exc: Exception) -> Response:
    """Every error as ``{"error": message}``: a refusal (GameError, BodyError, HTTPException)
    with its status, anything else a 500 whose traceback only the operator sees."""
    if isinstance(exc, HTTPException):
        return _error(exc.detail or "error", exc.status_code)
    if isinstance(exc, GameError):
        return _error(str(exc), exc.status)
    traceback.print_exception(exc, file=sys.stderr)  # the client learns nothing of the server's insides
    return _error("internal error (the server's log has the details)", 500)
