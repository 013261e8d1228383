"""Streamable HTTP for `nlmsync serve`: loopback by default, a bearer token required anywhere else.

A token, when configured (`serve_token` / `NLMSYNC_SERVE_TOKEN`), is checked on every HTTP request,
loopback included; binding to a non-loopback address without one is refused before anything listens.
`listen` binds the socket first, so the URL (with the port picked for `--port 0`) can be announced
before the first request and a busy or foreign address is a one-line usage error.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
from collections.abc import Callable

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from nlmsync.errors import ConfigError, UsageError

__all__ = ["BearerTokenMiddleware", "check_bind", "is_loopback", "listen", "mcp_url", "run_http"]


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
                   sock: socket.socket | None = None, announce: Callable[[str], None] | None = None) -> None:
    """Serve streamable HTTP at `http://host:port/mcp` until cancelled or signalled (on `sock` if given: a
    socket already bound and listening); `announce` gets the URL once the socket listens.

    Raises:
        ConfigError: off loopback without a token.
        UsageError: the address cannot be bound.
    """
    check_bind(host, token)
    owned = sock is None
    sock = listen(host, port) if sock is None else sock
    try:
        if announce is not None:
            announce(mcp_url(sock, host))
        config = uvicorn.Config(http_app(server, host, token), log_level="warning", access_log=False, lifespan="on")
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        if owned:
            sock.close()
