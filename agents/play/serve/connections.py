"""sorry-serve's HTTP connections, bounded: uvicorn's h11 protocol with a read deadline and a
cap on open connections.

uvicorn closes a keep-alive connection that stays silent (``timeout_keep_alive``) and answers
503 past ``limit_concurrency``, but a client that sends a request a byte at a time, or opens
thousands of connections and never finishes a request, holds a file descriptor each until the
process runs out of them (then every accept fails and the log fills with ``Too many open
files``). Two rules close that door:

- **Read deadline**: a request's headers and body must arrive within ``read_seconds`` (at most
  :data:`MAX_READ_SECONDS`) of the connection opening or of the previous response; after that
  the connection is closed. The time the app takes to answer is not counted.
- **Connection cap**: at most ``max_connections`` open at once, and never more than the
  process's file-descriptor limit leaves room for (:func:`connection_cap`); a connection over
  the cap is answered 503 and closed as soon as it is accepted, without a log line.
"""

from __future__ import annotations

import asyncio
import resource

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from .limits import DEFAULT_MAX_CONNECTIONS, MAX_READ_SECONDS

__all__ = ["BACKLOG", "DEFAULT_MAX_CONNECTIONS", "MAX_READ_SECONDS", "bounded_protocol", "connection_cap"]
# The listen backlog, which asyncio also uses as the number of connections it accepts in one
# go before any of them reaches connection_made (where one over the cap is closed).
BACKLOG = 128
# Descriptors kept free: two accept batches in flight (accepted, not yet closed) and everything
# else the server opens (the listening socket, the search workers' pipes, policy and static
# files, numba's cache). Without them accept() fails with EMFILE and asyncio logs a traceback.
FD_RESERVE = 2 * BACKLOG + 64
_BUSY = b"the server has too many open connections; try again\n"
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: " + str(len(_BUSY)).encode() + b"\r\nconnection: close\r\n\r\n" + _BUSY
)
# The client has sent a whole request (or can send nothing more): no deadline is running.
_REQUEST_IN = (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR)


def connection_cap(requested: int) -> int:
    """`requested`, lowered so that the open connections leave FD_RESERVE descriptors of the
    process's limit (``ulimit -n``) free; ValueError if that leaves fewer than 8."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    cap = requested if soft == resource.RLIM_INFINITY else min(requested, soft - FD_RESERVE)
    if cap < 8:
        raise ValueError(f"the file-descriptor limit ({soft}, ulimit -n) leaves room for too few connections")
    return cap


def bounded_protocol(max_connections: int, read_seconds: float = MAX_READ_SECONDS) -> type[H11Protocol]:
    """uvicorn's h11 protocol class with the module's two rules (pass it as ``http=``)."""
    if not 0 < read_seconds <= MAX_READ_SECONDS:
        raise ValueError(f"the read deadline must be above 0 and at most {MAX_READ_SECONDS:g} s, got {read_seconds}")

    class BoundedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                transport.write(REFUSAL)
                transport.close()
                return
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state in _REQUEST_IN:
                self._disarm()

        def on_response_complete(self) -> None:
            super().on_response_complete()  # may start the next request of a kept-alive connection
            if not self.transport.is_closing() and self.conn.their_state not in _REQUEST_IN:
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(read_seconds, self._too_slow)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self.transport.close()

    return BoundedH11Protocol
