"""Streamable HTTP for `nlmsync serve`: loopback by default, a bearer token required anywhere else.

A token, when configured (`serve_token` / `NLMSYNC_SERVE_TOKEN`), is checked on every HTTP request,
loopback included; binding to a non-loopback address without one is refused before anything listens.
`listen` binds the socket first, so the URL (with the port picked for `--port 0`) can be announced
before the first request and a busy or foreign address is a one-line usage error.

Connections are accepted before anyone is authenticated, so they are what an attacker (or a misbehaving
client) spends: the server holds at most `max_connections` at once — fewer than its file descriptors allow,
so the state file, the notes and its own logging can always be opened. A connection beyond that makes room by
closing the held one that has waited longest for a request — one that has sent none yet first, then one idle
since its last answer — so a flood of idle connections cannot keep a client that sends its request out; only
when every held connection is busy with a request is the new one closed as soon as it is accepted. A
connection that has not sent a whole request within `request_timeout` seconds (nothing at all, or headers a
byte at a time) is closed. Under pressure it refuses and drops connections and keeps serving. What the event loop has to report (an accept that failed for want of descriptors) is one line on
stderr, written without opening anything.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import os
import resource
import socket
from collections.abc import Callable
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from nlmsync.errors import ConfigError, UsageError

__all__ = ["BearerTokenMiddleware", "check_bind", "is_loopback", "listen", "max_connections", "mcp_url", "run_http"]

MOST_CONNECTIONS = 128
"""Connections held at once at most: an MCP client uses one or two."""
RESERVED_DESCRIPTORS = 32
"""File descriptors kept free beyond those open when serving starts: notes being read, the state file's
temporary files, a log line — whatever the server must still open while it is under pressure."""
REQUEST_TIMEOUT = 10.0
"""Seconds a connection may take to send a whole request (its headers) once it is opened or its last answer
was sent."""


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse to listen off loopback without a bearer token.

    Raises:
        ConfigError: `host` is not a loopback address and no token is configured.
    """
    if not is_loopback(host) and not token:
        raise ConfigError(f"serve: binding to {host} needs a bearer token; set serve_token in the config "
                          "or NLMSYNC_SERVE_TOKEN", key="serve_token")


class BearerTokenMiddleware:
    """Answers 401 to any HTTP request without `Authorization: Bearer <token>` (constant-time compare)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._authorized(scope):
            body = json.dumps({"error": "unauthorized", "detail": "missing or wrong bearer token"}).encode()
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                                    (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name.lower() == b"authorization":
                scheme, _, credentials = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(credentials.strip(), self.token)
        return False


def max_connections(reserved: int = RESERVED_DESCRIPTORS, most: int = MOST_CONNECTIONS) -> int:
    """How many connections the server holds at once: `most`, or fewer when the descriptors this process may
    still open (`ulimit -n` less those open now) leave fewer once `reserved` are kept free."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return most
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except OSError:  # no /proc (macOS): count what a server has open when it starts, with room to spare
        in_use = reserved
    return max(1, min(most, soft - in_use - reserved))


class _GuardedHTTP(H11Protocol):
    """uvicorn's HTTP/1.1 connection with two guards (see the module's docstring): a connection beyond the
    bound closes the one that has waited longest for a request (or itself, when none waits), and one that does
    not send a whole request in time is closed. The bound and the timeout are set on the class by `run_http`
    (uvicorn makes the connections itself)."""

    bound = MOST_CONNECTIONS
    request_timeout = REQUEST_TIMEOUT
    _request_timer: asyncio.TimerHandle | None = None
    _requested = False  # it has sent a whole request
    _waiting_since = 0.0  # when it was opened, or its last answer sent

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.bound:
            longest = self._longest_waiting()
            # the descriptor is freed at once; the client sees the connection reset
            (longest.transport if longest is not None else transport).abort()
            if longest is None:
                return
            longest._stop_waiting()  # closing: no longer one to make room with
        self._await_request()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._requested = True
            self._stop_waiting()  # a whole request came: the app has it

    def _longest_waiting(self) -> _GuardedHTTP | None:
        """The held connection that has waited longest for a request, one that never sent one first; None when
        every one is busy with a request (or closing)."""
        waiting = [c for c in self.connections
                   if isinstance(c, _GuardedHTTP) and c is not self and c._request_timer is not None]
        return min(waiting, key=lambda c: (c._requested, c._waiting_since), default=None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._await_request()

    def connection_lost(self, exc: Exception | None) -> None:
        self._stop_waiting()
        super().connection_lost(exc)

    def _await_request(self) -> None:
        self._stop_waiting()
        self._waiting_since = self.loop.time()
        self._request_timer = self.loop.call_later(self.request_timeout, self._request_timed_out)

    def _stop_waiting(self) -> None:
        if self._request_timer is not None:
            self._request_timer.cancel()
            self._request_timer = None

    def _request_timed_out(self) -> None:
        self._request_timer = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


ACCEPTS_AT_ONCE = 16
"""Connections the event loop accepts in one go before their guards run: the descriptors a burst can take
beyond the bound (within `RESERVED_DESCRIPTORS`)."""
REPORT_AGAIN_AFTER = 10.0
"""Seconds before the same event loop problem is reported again (an accept out of descriptors is retried
every second while the pressure lasts)."""


class _LoopReports:
    """The event loop's reports (an accept that failed with EMFILE, which it retries after a pause) as one line
    on stderr, written straight to the descriptor — nothing to import or open, no error of its own — and the
    same problem at most once every `REPORT_AGAIN_AFTER` seconds."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        problem = context.get("exception")
        said = f"{context.get('message', 'event loop error')}{f' ({problem})' if problem else ''}"
        now = loop.time()
        if now - self._last.get(said, -REPORT_AGAIN_AFTER) < REPORT_AGAIN_AFTER:
            return
        self._last[said] = now
        try:
            os.write(2, f"nlmsync: serve: {said}\n".encode("utf-8", "replace"))
        except OSError:
            pass


def http_app(server: MCPServer, host: str, token: str | None) -> ASGIApp:
    """The ASGI app serving MCP at `/mcp`, behind the token check when a token is set."""
    app: ASGIApp = server.streamable_http_app(host=host)
    return BearerTokenMiddleware(app, token) if token else app


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to `host:port` (port 0: a free one) and already listening.

    Raises:
        UsageError: the address cannot be used (port taken, not an address of this machine, unknown name).
    """
    def refused(exc: OSError) -> UsageError:
        return UsageError(f"--host/--port: cannot listen on {host}:{port} ({exc.strerror or exc})")

    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise refused(exc) from None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise refused(exc) from None
    return sock


def mcp_url(sock: socket.socket, host: str) -> str:
    """`http://host:PORT/mcp` for a listening socket (IPv6 hosts in brackets)."""
    bare = host.strip("[]")
    return f"http://{f'[{bare}]' if ':' in bare else bare}:{sock.getsockname()[1]}/mcp"


async def run_http(server: MCPServer, host: str, port: int, token: str | None, *,
                   sock: socket.socket | None = None, announce: Callable[[str], None] | None = None,
                   connections: int | None = None, request_timeout: float = REQUEST_TIMEOUT) -> None:
    """Serve streamable HTTP at `http://host:port/mcp` until cancelled or signalled (on `sock` if given: a
    socket already bound and listening); `announce` gets the URL once the socket listens. At most `connections`
    at once (default `max_connections()`), each given `request_timeout` seconds to send a request.

    Raises:
        ConfigError: off loopback without a token.
        UsageError: the address cannot be bound.
    """
    check_bind(host, token)
    owned = sock is None
    sock = listen(host, port) if sock is None else sock
    bound = connections if connections is not None else max_connections()
    guarded = type("GuardedHTTP", (_GuardedHTTP,), {"bound": bound, "request_timeout": request_timeout})
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    loop.set_exception_handler(_LoopReports())
    try:
        if announce is not None:
            announce(mcp_url(sock, host))
        config = uvicorn.Config(http_app(server, host, token), log_level="warning", access_log=False, lifespan="on",
                                http=guarded, backlog=ACCEPTS_AT_ONCE)
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        loop.set_exception_handler(previous)
        if owned:
            sock.close()
