"""``sorry-serve``: play Sorry! in the browser against agents and trained policies.

    sorry-serve                       # http://127.0.0.1:8000/
    sorry-serve --port 8080 --ttl 60 --max-games 32 --hint-agent "expectimax:depth=3"

The page draws the board in SVG, highlights the legal moves and plays a move from clicks on
the board; opponents' moves are shown one by one. Everything it needs is served from the
package (no network at run time). The server binds 127.0.0.1 unless ``--host`` says
otherwise; it reads policy files that a client names, so keep it on the loopback address.
The game logic is :mod:`agents.serve.games`, the web layer :mod:`agents.serve.app`; see
docs/browser.md. Needs the ``serve`` extra (Starlette and uvicorn).
"""

from __future__ import annotations

import argparse
import pathlib
import sys


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
    args = p.parse_args(argv)
    if not 0 < args.port < 65536:
        p.error(f"--port must be 1..65535, got {args.port}")
    if args.ttl <= 0 or args.max_games < 1:
        p.error("--ttl must be positive and --max-games at least 1")
    if args.checkpoints is not None and not args.checkpoints.is_dir():
        p.error(f"--checkpoints {args.checkpoints} is not a folder")
    try:
        import uvicorn

        from .app import DEFAULT_CHECKPOINTS, DEFAULT_HINT_AGENT, create_app
        from .games import GameStore
    except ImportError as exc:
        p.error(f"{exc}: sorry-serve needs the serve extra: pip install -e '.[serve]'")
    try:
        app = create_app(
            GameStore(ttl=args.ttl * 60, max_games=args.max_games),
            checkpoints=args.checkpoints or DEFAULT_CHECKPOINTS,
            hint_agent=args.hint_agent or DEFAULT_HINT_AGENT,
        )
    except ValueError as exc:
        p.error(f"--hint-agent: {exc}")
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"warning: --host {args.host} lets other machines in, and clients may name any policy file "
            "on this disk as an opponent",
            file=sys.stderr,
        )
    print(f"Sorry! in the browser: http://{args.host}:{args.port}/  (Ctrl-C stops)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
