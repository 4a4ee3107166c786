"""The browser game's web layer: a Starlette app serving the page and a JSON API.

Routes (every error is JSON ``{"error": message}`` with a 4xx/5xx status, and a refused
request never changes a game):

=======================================  ====================================================
``GET /``                                the page (static files under ``/static/``)
``GET /api/layout``                      the board geometry (:func:`sorry_env.board_layout.layout`)
``GET /api/options``                     presets (with their player counts), agent names,
                                         the shipped policies, the hint agent, the defaults
``POST /api/games``                      a new game: ``{"players", "rules", "opponents",
                                         "seat"?, "seed"?}`` -> 201 ``{"game", "events"}``
``GET /api/games/{id}``                  ``{"game": view}``
``POST /api/games/{id}/move``            ``{"action", "version"?}`` -> ``{"game", "events"}``
``GET /api/games/{id}/hint``             ``{"hint": {"action", "description", "clicks", ...}}``
``DELETE /api/games/{id}``               forget the game
=======================================  ====================================================

Agents think in worker threads, so one game's slow opponent never holds up another game;
each game's lock makes its requests take turns.
"""

from __future__ import annotations

import json
import os
import pathlib
import secrets

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from sorry_env import board_layout, game
from sorry_env.rules import DEFAULT_MAX_TURNS, PRESETS, get_rules

from .. import AGENTS, catalog, make_agent
from .games import GameError, GameSession, GameStore

STATIC = pathlib.Path(__file__).parent / "static"
# The shipped policies: checkpoints/ beside the package in a source checkout (agents.catalog).
DEFAULT_CHECKPOINTS = catalog.checkpoints_dir()
DEFAULT_HINT_AGENT = "montecarlo"  # the strongest search agent on the ladder (docs/agents.md: 56.0% vs the heuristic)
CREATE_KEYS = {"players", "rules", "opponents", "seat", "seed"}
MOVE_KEYS = {"action", "version"}
# azsearch from a client: at most this many simulations (about 10 ms a move at 64 on one
# core, docs/agents.md), and its network files only among the offered policy files.
SERVE_MAX_SIMULATIONS = 256
MAX_BODY = 64 * 1024  # bytes: far more than any request of this API needs


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def list_policies(folder: pathlib.Path | None) -> list[dict]:
    """The policy files in `folder`: spec (the path as a client names it), name, rules and
    player count from each file's metadata. Files that are not policies (a value network)
    are left out."""
    if folder is None or not folder.is_dir():
        return []
    from ..policy import (
        read_metadata,  # imports torch: only when there are files to read
    )

    found = []
    in_catalog = folder.resolve() == catalog.checkpoints_dir().resolve()
    shipped_names = {e.file: e.name for e in catalog.CATALOG} if in_catalog else {}
    for path in sorted(folder.glob("*.safetensors")):
        try:
            meta = read_metadata(path)
        except ValueError:
            continue
        found.append(
            {
                "spec": f"{folder.name}/{path.name}",
                "path": str(path),
                "name": meta.get("name", path.stem),
                "rules": meta["rules"]["name"],
                "players": int(meta["num_players"]),
                "shipped": shipped_names.get(path.name),  # catalog name of a shipped file, else None
                "value": "value_hidden" in meta["network"],  # holds a value network (win chance)
            }
        )
    return found


def bounded_search_spec(spec: str, listed: dict[str, str]) -> str:
    """An ``azsearch:...`` spec from a client with its files mapped to offered policy files
    (client name -> path) and its simulations capped; ValueError otherwise. A client never
    names a file the server did not offer."""
    settings = []
    for item in filter(None, spec.partition(":")[2].split(",")):
        key, _, value = (part.strip() for part in item.partition("="))
        if key in ("net", "policy"):
            if value not in listed:
                raise ValueError(f"azsearch {key}={value!r}: choose one of the offered policy files {sorted(listed)}")
            value = listed[value]
        elif key == "simulations" and not (value.isdigit() and 1 <= int(value) <= SERVE_MAX_SIMULATIONS):
            raise ValueError(f"azsearch simulations must be 1..{SERVE_MAX_SIMULATIONS} here, got {value[:20]!r}")
        settings.append(f"{key}={value}")
    return "azsearch:" + ",".join(settings)


class GameServer:
    """The store of games plus what a new game needs: the policy folder and the hint agent."""

    def __init__(
        self, store: GameStore, checkpoints: pathlib.Path | None, hint_agent: str, max_turns: int = DEFAULT_MAX_TURNS
    ):
        make_agent(hint_agent)  # a bad hint spec is refused at start-up, not at the first hint
        self.store = store
        self.checkpoints = checkpoints
        self.hint_spec = hint_agent
        self.max_turns = max_turns
        self._policies: list[dict] | None = None

    @property
    def policies(self) -> list[dict]:
        if self._policies is None:
            self._policies = list_policies(self.checkpoints)
        return self._policies

    def options(self) -> dict:
        presets = []
        for name, rules in PRESETS.items():
            seats = {}
            for n in (2, 3, 4):
                try:
                    seats[str(n)] = list(game.seats_for(n, rules=rules))
                except ValueError:
                    pass
            presets.append(
                {
                    "name": name,
                    "players": [int(n) for n in seats],
                    "seats": seats,
                    "teams": rules.teams != "none",
                    "hands": bool(rules.hand_size),
                    "pawns": rules.pawns_per_player,
                }
            )
        return {
            "presets": presets,
            # agents playable by name alone (azsearch needs net=: an offered file, bounded_search_spec)
            "agents": sorted(a for a in AGENTS if a != "azsearch"),
            "policies": [{k: p[k] for k in ("spec", "name", "rules", "players", "shipped")} for p in self.policies],
            "trained": catalog.TRAINED,
            "hint_agent": self.hint_spec,
            "max_turns": self.max_turns,
            "defaults": {"players": 2, "rules": "hasbro2003", "opponents": ["heuristic"]},
        }

    def _agent(self, spec, seat: int, rules, players: int, seed: int):
        """(label, agent) for one opponent spec, checked against the game; ValueError if not."""
        if not isinstance(spec, str) or not spec.strip():
            raise ValueError(f"an opponent must be an agent spec or a policy file (text), got {spec!r}")
        listed = {p["spec"]: p["path"] for p in self.policies}
        listed.update({p["shipped"]: p["path"] for p in self.policies if p["shipped"]})
        resolved = catalog.resolve_spec(spec, rules, players)  # "trained": the game's shipped file
        if resolved.partition(":")[0] == "azsearch":
            resolved = bounded_search_spec(resolved, listed)
        path = listed.get(resolved, resolved)
        agent = make_agent(path, seed=seed)
        agent.check_game(rules, players)
        return os.path.basename(spec), agent

    def create(self, body: dict) -> GameSession:
        """A new game from a request body, every field checked first (ValueError)."""
        unknown = set(body) - CREATE_KEYS
        if unknown:
            raise ValueError(f"unknown fields {sorted(unknown)}; a new game takes {sorted(CREATE_KEYS)}")
        rules_name = body.get("rules", "hasbro2003")
        if not isinstance(rules_name, str):
            raise TypeError(f"rules must be a preset name, got {rules_name!r}")
        rules = get_rules(rules_name)
        players = body.get("players", 2)
        seats = game.seats_for(players, rules=rules)
        seat = body.get("seat", seats[0])
        if not _is_int(seat) or seat not in seats:
            raise ValueError(f"seat must be one of the seats in play {list(seats)}, got {seat!r}")
        seed = body.get("seed")
        if seed is None:
            seed = secrets.randbelow(2**31)
        game.check_seed(seed)
        specs = body.get("opponents", ["heuristic"])
        if isinstance(specs, str):
            specs = [specs]
        others = [seats[(seats.index(seat) + k) % len(seats)] for k in range(1, len(seats))]
        if not isinstance(specs, list) or len(specs) not in (1, len(others)):
            raise ValueError(
                f"opponents must list 1 or {len(others)} agents for {players} players "
                f"(the seats after yours in turn order), got {specs!r}"
            )
        if len(specs) == 1:
            specs = specs * len(others)
        opponents = {}
        for k, (other, spec) in enumerate(zip(others, specs)):
            try:
                opponents[other] = self._agent(spec, other, rules, players, seed + 1 + k)
            except ValueError as exc:
                raise ValueError(f"opponent {k + 1} ({spec!r}): {exc}") from None
        hint = (self.hint_spec, make_agent(self.hint_spec, seed=seed + 99))
        estimator = self._estimator(rules, players)
        return GameSession(self.store.new_id(), rules, players, seat, opponents, seed, hint, self.max_turns, estimator)

    def _estimator(self, rules, players: int):
        """The listed shipped policy of this game if it holds a value network (it tells the
        person's win chance), else None."""
        entry = catalog.find(rules, players)
        listed = {p["shipped"]: p for p in self.policies if p["shipped"]}
        if entry is None or entry.name not in listed or not listed[entry.name]["value"]:
            return None
        return make_agent(listed[entry.name]["path"])


async def _json_body(request: Request) -> dict:
    """The request's JSON object, or GameError 400 naming what is wrong with it."""
    chunks, size = [], 0
    async for chunk in request.stream():  # stop reading at the limit rather than hold any size in memory
        size += len(chunk)
        if size > MAX_BODY:
            raise GameError(f"the request body is over the limit: at most {MAX_BODY} bytes are read", status=413)
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        body = json.loads(raw or b"{}")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GameError(f"malformed JSON: {exc}", status=400) from None
    if not isinstance(body, dict):
        raise GameError(f"the request body must be a JSON object, got {type(body).__name__}", status=400)
    return body


def create_app(
    store: GameStore | None = None,
    checkpoints: pathlib.Path | None = DEFAULT_CHECKPOINTS,
    hint_agent: str = DEFAULT_HINT_AGENT,
    max_turns: int = DEFAULT_MAX_TURNS,
) -> Starlette:
    """The ASGI app. `store` holds the games (its ttl and cap); `checkpoints` is the folder
    whose policy files are offered as opponents; `hint_agent` answers hints."""
    server = GameServer(store if store is not None else GameStore(), checkpoints, hint_agent, max_turns)

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html")

    async def layout(request: Request) -> Response:
        return JSONResponse(board_layout.layout())

    async def options(request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(server.options))

    async def create(request: Request) -> Response:
        body = await _json_body(request)
        try:
            session = await run_in_threadpool(server.create, body)
        except (ValueError, TypeError) as exc:
            return _error(str(exc), 422)

        def start():
            with session.lock:
                server.store.add(session)  # refused (503) when the server is full
                events = session.advance()  # the opponents may move first
                return {"game": session.view(), "events": events}

        return JSONResponse(await run_in_threadpool(start), status_code=201)

    async def show(request: Request) -> Response:
        session = server.store.get(request.path_params["game_id"])
        return JSONResponse({"game": await run_in_threadpool(_locked(session, session.view))})

    async def move(request: Request) -> Response:
        session = server.store.get(request.path_params["game_id"])
        body = await _json_body(request)
        unknown = set(body) - MOVE_KEYS
        if unknown or "action" not in body:
            raise GameError(f'a move is {{"action": index, "version": n (optional)}}, got {body!r}', status=422)
        action, version = body["action"], body.get("version")
        if not _is_int(action) or (version is not None and not _is_int(version)):
            raise GameError(f"action and version must be integers, got {action!r} and {version!r}", status=422)

        def play():
            events = session.play(action, version)
            return {"game": session.view(), "events": events}

        return JSONResponse(await run_in_threadpool(_locked(session, play)))

    async def hint(request: Request) -> Response:
        session = server.store.get(request.path_params["game_id"])
        return JSONResponse({"hint": await run_in_threadpool(_locked(session, session.hint))})

    async def delete(request: Request) -> Response:
        server.store.delete(request.path_params["game_id"])
        return JSONResponse({"deleted": request.path_params["game_id"]})

    async def game_error(request: Request, exc: GameError) -> Response:
        return _error(str(exc), exc.status)

    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(exc.detail or "error", exc.status_code)

    async def server_error(request: Request, exc: Exception) -> Response:
        return _error(f"internal error: {type(exc).__name__}: {exc}", 500)

    routes = [
        Route("/", page),
        Route("/api/layout", layout),
        Route("/api/options", options),
        Route("/api/games", create, methods=["POST"]),
        Route("/api/games/{game_id}", show, methods=["GET"]),
        Route("/api/games/{game_id}", delete, methods=["DELETE"]),
        Route("/api/games/{game_id}/move", move, methods=["POST"]),
        Route("/api/games/{game_id}/hint", hint, methods=["GET"]),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    handlers = {GameError: game_error, HTTPException: http_error, Exception: server_error}
    app = Starlette(routes=routes, exception_handlers=handlers)
    app.state.server = server
    return app


def _locked(session: GameSession, work):
    """`work` run under the game's lock (in a worker thread)."""

    def run():
        with session.lock:
            return work()

    return run
