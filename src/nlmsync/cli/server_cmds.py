"""`nlmsync serve`: nlmsync's own MCP server over stdio (default) or streamable HTTP."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import anyio
import typer

from nlmsync.cli._app import app, cli_context


class Transport(str, Enum):
    stdio = "stdio"
    http = "http"


@app.command("serve")
def serve_command(
    ctx: typer.Context,
    transport: Annotated[Transport, typer.Option("--transport", help="stdio (for a client that starts nlmsync) "
                                                                     "or http (streamable HTTP at /mcp).")]
    = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="HTTP address to bind; off loopback a bearer token "
                                                     "(serve_token / NLMSYNC_SERVE_TOKEN) is required.")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="HTTP port.")] = 8765,
) -> None:
    """Run nlmsync's MCP server: search_notes, read_note, get_chunk, ask_notebook, refresh_notebook."""
    settings = cli_context(ctx).settings()
    from nlmsync.server import build_server, check_bind, run_http, run_stdio

    if transport is Transport.http:
        check_bind(host, settings.serve_token)
    server = build_server(settings)
    if transport is Transport.http:
        anyio.run(run_http, server, host, port, settings.serve_token)
    else:
        anyio.run(run_stdio, server)
