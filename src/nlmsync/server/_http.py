"""Streamable HTTP for `nlmsync serve`: loopback by default, a bearer token required anywhere else.

A token, when configured (`serve_token` / `NLMSYNC_SERVE_TOKEN`), is checked on every HTTP request,
loopback included; binding to a non-loopback address without one is refused before anything listens.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Receive, Scope, Send

from nlmsync.errors import ConfigError

__all__ = ["BearerTokenMiddleware", "check_bind", "is_loopback", "run_http"]


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


async def run_http(server: MCPServer, host: str, port: int, token: str | None, *,
                   sock: socket.socket | None = None) -> None:
    """Serve streamable HTTP at `http://host:port/mcp` until cancelled (on `sock` if given: a socket
    already bound and listening, so callers can connect before the server has started).

    Raises:
        ConfigError: off loopback without a token.
    """
    check_bind(host, token)
    config = uvicorn.Config(http_app(server, host, token), host=host, port=port, log_level="warning",
                            access_log=False, lifespan="on")
    await uvicorn.Server(config).serve(sockets=[sock] if sock is not None else None)
