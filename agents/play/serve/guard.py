"""The browser server's front door: requests from other sites, or addressed to other names,
are refused before any route sees them, and request bodies are read within bounds.

- **Host** must name the server (DNS rebinding: a page at ``evil.example`` whose name now
  points at 127.0.0.1 sends ``Host: evil.example``): 400.
- **State-changing methods** (POST, PUT, PATCH, DELETE): an ``Origin`` header, when sent, must
  be this server's own origin, and ``Sec-Fetch-Site``, when sent, ``same-origin`` or ``none``
  (a cross-site form or fetch): 403. A POST must be ``application/json`` (a cross-site
  ``text/plain`` POST needs no preflight; a JSON one does, and gets no CORS answer): 415.
- **One of each**: a request with two ``Host`` or two ``Origin`` headers is refused (400/403):
  which one counts would otherwise depend on the parser.
- **Bodies** (:func:`read_json`): at most MAX_BODY bytes, nesting at most MAX_DEPTH deep,
  integers at most MAX_DIGITS digits, no NaN or Infinity: 400/413, never a 500.
- **Framing**: every response says ``X-Frame-Options: DENY`` and carries a Content-Security-
  Policy allowing only the server's own scripts, styles and requests, and no framing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from .games import GameError

MAX_BODY = 64 * 1024  # bytes: far more than any request of this API needs
MAX_DEPTH = 8  # nesting of [ and {: the deepest body of this API is 2
MAX_DIGITS = 20  # an integer of this API (seed, action, version) has at most 10
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
SINGLE_HEADERS = ("host", "origin")  # a request may give each at most once
SECURITY_HEADERS = [
    (b"x-frame-options", b"DENY"),
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
        b"form-action 'self'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
]
_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)


class BodyError(GameError):
    """A request body refused: `status` is 400, 408 or 413."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message, status)


def host_name(host: str) -> str:
    """The name part of a Host header, lower-cased: ``[::1]:8000`` -> ``::1``."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    name, colon, port = host.rpartition(":")
    return name if colon and port.isdigit() and ":" not in name else host


def allowed_hosts(bound: str, extra: tuple[str, ...] = ()) -> frozenset[str]:
    """The names a request may address: the bound address or name, its loopback aliases when
    it is a loopback or wildcard address, and `extra` (``--allow-host``)."""
    names = {host_name(bound) if not bound.startswith("[") else bound.strip("[]").lower()}
    if bound in LOOPBACK_NAMES or bound in ("0.0.0.0", "::"):
        names.update(LOOPBACK_NAMES)
    names.update(host_name(h) for h in extra)
    return frozenset(names)


class RequestGuard:
    """ASGI middleware refusing foreign hosts and cross-site state changes (module docstring)."""

    def __init__(self, app, hosts: frozenset[str]):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)

        async def send_secured(message):
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *SECURITY_HEADERS]}
            await send(message)

        names = [k.decode("latin-1").lower() for k, _ in scope["headers"]]
        headers = dict(zip(names, (v.decode("latin-1") for _, v in scope["headers"])))
        repeated = [name for name in SINGLE_HEADERS if names.count(name) > 1]
        refusal = self.refusal(scope, headers, repeated)
        if refusal is None:
            return await self.app(scope, receive, send_secured)
        status, message = refusal
        await JSONResponse({"error": message}, status_code=status)(scope, receive, send_secured)

    def refusal(self, scope, headers: dict[str, str], repeated: Sequence[str] = ()) -> tuple[int, str] | None:
        """(status, message) for a refused request, else None. `repeated`: the SINGLE_HEADERS
        the request gives more than once."""
        if "host" in repeated:
            return 400, "a request may name one Host, this one names several"
        if "origin" in repeated:
            return 403, "cross-site request refused: a request may carry one Origin, this one carries several"
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return 400, f"this server answers to {', '.join(sorted(self.hosts))}, not the Host {host[:80]!r}"
        if scope["method"] not in STATE_CHANGING:
            return None
        origin = headers.get("origin")
        own = f"{scope.get('scheme', 'http')}://{host.strip().lower()}"
        if origin is not None and origin.strip().lower() != own:
            return 403, f"cross-site request refused: Origin {origin[:80]!r} is not this server ({own})"
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return 403, "cross-site request refused (Sec-Fetch-Site)"
        media = headers.get("content-type", "").partition(";")[0].strip().lower()
        if scope["method"] == "POST" and media != "application/json":  # the API's only method with a body
            return 415, f"a request body must be Content-Type: application/json, got {media[:60]!r}"
        return None


def _nesting_over(raw: bytes, limit: int) -> bool:
    """Whether the JSON text nests [ and { deeper than `limit` (strings skipped)."""
    depth = 0
    for byte in _STRINGS.sub(b'""', raw):
        if byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise BodyError(f"an integer in the request has {len(text.lstrip('-'))} digits; at most {MAX_DIGITS} are read")
    return int(text)


def _no_constant(name: str):
    raise BodyError(f"{name} is not a number this API takes")


async def read_json(request: Request) -> dict:
    """The request's JSON object, or BodyError naming what is wrong with it."""
    chunks, size = [], 0
    try:
        async for chunk in request.stream():  # stop reading at the limit rather than hold any size in memory
            size += len(chunk)
            if size > MAX_BODY:
                raise BodyError(f"the request body is over the limit: at most {MAX_BODY} bytes are read", status=413)
            chunks.append(chunk)
    except ClientDisconnect:  # the client went away, or missed the read deadline (connections.py)
        raise BodyError("the request body did not arrive", status=408) from None
    raw = b"".join(chunks) or b"{}"
    if _nesting_over(raw, MAX_DEPTH):
        raise BodyError(f"the request body nests deeper than {MAX_DEPTH} levels")
    try:
        body = json.loads(raw, parse_int=_bounded_int, parse_constant=_no_constant)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BodyError(f"malformed JSON: {exc}") from None
    except RecursionError:  # cannot happen within MAX_DEPTH; kept so it is never a 500
        raise BodyError("the request body nests too deep") from None
    if not isinstance(body, dict):
        raise BodyError(f"the request body must be a JSON object, got {type(body).__name__}")
    return body
