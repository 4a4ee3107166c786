"""``sorry-serve``: play Sorry! in the browser against agents and trained policies.

    sorry-serve                       # http://127.0.0.1:8000/
    sorry-serve --port 8080 --ttl 60 --max-games 32 --hint-agent "expectimax:depth=3"

The page draws the board in SVG, highlights the legal moves and plays a move from clicks on
the board; opponents' moves are shown one by one. Every other registered game
(:mod:`sorry_env.games`) is played over the same API as text (``{"game": ID}``; the page
``/static/text.html``; one session type for every game, shown through the game's
``Game.play_view``). Everything it needs is served from the
package (no network at run time). The server binds 127.0.0.1 unless ``--host`` says
otherwise. A client picks opponents only from the server's list (registered agents within
caps, shipped policies, the policy files of ``--checkpoints`` found at start-up): nothing a
client sends is imported or names a file (docs/hardening.md). The game logic is
:mod:`sorry_env.agents.play.serve.games`, the web layer :mod:`sorry_env.agents.play.serve.app`, the request checks
:mod:`sorry_env.agents.play.serve.guard`, the opponents on offer :mod:`sorry_env.agents.play.serve.opponents`,
the search processes :mod:`sorry_env.agents.play.serve.workers`; see docs/browser.md. Needs the ``serve`` extra
(Starlette and uvicorn).
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys

from .limits import DEFAULT_MAX_CONNECTIONS, MAX_READ_SECONDS


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="sorry-serve", description="Play Sorry! in the browser against agents.")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--ttl", type=float, default=30.0, help="minutes a game may sit idle before it is forgotten")
    p.add_argument("--max-games", type=int, default=64, help="games held at once")
    p.add_argument("--hint-agent", default=None, help="agent spec that answers hints (default: mcts)")
    p.add_argument(
        "--checkpoints",
        type=pathlib.Path,
        default=None,
        help="folder of policy files offered as opponents (default: the shipped checkpoints/)",
    )
    p.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another name requests may address (their Host header); repeatable. Default: the --host "
        "address, plus localhost/127.0.0.1/::1 when that is a loopback or wildcard address",
    )
    p.add_argument(
        "--games-per-client",
        type=int,
        default=None,
        help="games one client address holds at once; its least recently used game makes room for a new one "
        "(default: a quarter of --max-games, at least 1)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=DEFAULT_MAX_CONNECTIONS,
        help=f"open connections at once, the rest answered 503 (default {DEFAULT_MAX_CONNECTIONS}, "
        "lowered to fit the file-descriptor limit)",
    )
    p.add_argument(
        "--read-seconds",
        type=float,
        default=MAX_READ_SECONDS,
        help=f"time a client has to send a request's headers and body (default and most: {MAX_READ_SECONDS:g})",
    )
    p.add_argument("--workers", type=int, default=2, help="processes that run search moves (default 2)")
    p.add_argument(
        "--move-seconds",
        type=float,
        default=5.0,
        help="time budget of one search move; over it the heuristic moves instead (default 5)",
    )
    args = p.parse_args(argv)
    if not 0 < args.port < 65536:
        p.error(f"--port must be 1..65535, got {args.port}")
    if not (math.isfinite(args.ttl) and 0 < args.ttl <= MAX_TTL_MINUTES):
        p.error(f"--ttl must be a number of minutes above 0 and at most {MAX_TTL_MINUTES}, got {args.ttl}")
    if not 1 <= args.max_games <= MAX_GAMES:
        p.error(f"--max-games must be 1..{MAX_GAMES}, got {args.max_games}")
    if args.games_per_client is None:
        args.games_per_client = max(1, args.max_games // 4)
    if not 1 <= args.games_per_client <= args.max_games:
        p.error(f"--games-per-client must be 1..--max-games ({args.max_games}), got {args.games_per_client}")
    if not 1 <= args.max_connections <= 65_536:
        p.error(f"--max-connections must be 1..65536, got {args.max_connections}")
    if not (math.isfinite(args.read_seconds) and 0 < args.read_seconds <= MAX_READ_SECONDS):
        p.error(f"--read-seconds must be above 0 and at most {MAX_READ_SECONDS:g}, got {args.read_seconds}")
    if not 1 <= args.workers <= 64:
        p.error(f"--workers must be 1..64, got {args.workers}")
    if not (math.isfinite(args.move_seconds) and 0 < args.move_seconds <= 600):
        p.error(f"--move-seconds must be above 0 and at most 600, got {args.move_seconds}")
    if args.checkpoints is not None and not args.checkpoints.is_dir():
        p.error(f"--checkpoints {args.checkpoints} is not a folder")
    # the serve extra; without it the console script's launcher (sorry_env.extras) names it
    import uvicorn

    from .app import DEFAULT_CHECKPOINTS, DEFAULT_HINT_AGENT, create_app
    from .connections import BACKLOG, bounded_protocol, connection_cap
    from .games import GameStore
    from .guard import LOOPBACK_NAMES, allowed_hosts

    try:
        max_connections = connection_cap(args.max_connections)
    except ValueError as exc:
        p.error(str(exc))
    try:
        app = create_app(
            GameStore(ttl=args.ttl * 60, max_games=args.max_games, per_client=args.games_per_client),
            checkpoints=args.checkpoints or DEFAULT_CHECKPOINTS,
            hint_agent=args.hint_agent or DEFAULT_HINT_AGENT,
            hosts=allowed_hosts(args.host, tuple(args.allow_host)),
            workers=args.workers,
            move_budget=args.move_seconds,
        )
    except ValueError as exc:
        p.error(f"--hint-agent: {exc}")
    if args.host not in LOOPBACK_NAMES:
        print(f"warning: --host {args.host} lets other machines play on this server", file=sys.stderr)
    print(f"Sorry! in the browser: http://{args.host}:{args.port}/  (Ctrl-C stops)", flush=True)
    # A request still running at SIGTERM gets a few seconds (a search move is within its budget).
    uvicorn.run(
        app,
        host=args.host,
        port=args.port,
        log_level="warning",
        timeout_graceful_shutdown=3,
        http=bounded_protocol(max_connections, args.read_seconds),  # read deadline, connection cap
        limit_concurrency=max_connections,
        backlog=BACKLOG,
    )
    return 0


MAX_TTL_MINUTES = 7 * 24 * 60  # a week
MAX_GAMES = 10_000


if __name__ == "__main__":
    sys.exit(main())
