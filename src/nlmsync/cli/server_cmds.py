"""`nlmsync serve`: nlmsync's own MCP server over stdio (default) or streamable HTTP.

The server (the MCP SDK) and anyio are imported when `serve` runs, not with the module.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

import click

from nlmsync.cli._app import app, cli_context, examples


@app.command("serve", epilog=examples(
    "nlmsync --vault ~/notes serve                              # stdio, for a client that starts it",
    "nlmsync --vault ~/notes serve --transport http --port 0    # prints http://127.0.0.1:PORT/mcp",
))
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              help="stdio (for a client that starts nlmsync) or http (streamable HTTP at /mcp).")
@click.option("--host", default="127.0.0.1",
              help="HTTP address to bind; off loopback a bearer token (serve_token / NLMSYNC_SERVE_TOKEN) is required.")
@click.option("--port", type=click.IntRange(min=0, max=65535), default=8765,
              help="HTTP port; 0 picks a free one. The URL is printed on stdout once listening.")
@click.pass_context
def serve_command(ctx: click.Context, transport: str, host: str, port: int) -> None:
    """Run nlmsync's MCP server: search_notes, read_note, get_chunk, ask_notebook, refresh_notebook.

    The search index is brought up to date in the background as the server starts; a search that comes
    before it is ready waits, with progress notifications. Warnings (no --vault, a vault without notes) go
    to stderr, which an MCP client keeps in its log.
    """
    settings = cli_context(ctx).settings()
    import anyio

    from nlmsync.server import check_bind, plain_logging, run_http, run_stdio, serving

    if transport == "http":
        check_bind(host, settings.serve_token)
    plain_logging()
    if settings.vault == Path("."):
        _warn(f"no --vault given: serving the current folder, {Path.cwd()} (an MCP client starts nlmsync in "
              "a folder of its choosing: give --vault with an absolute path)")
    if transport == "http":
        with _stop_on_sigterm(), serving(settings, warn=_warn) as server:
            anyio.run(lambda: run_http(server, host, port, settings.serve_token, announce=_announce))
    else:
        # stdio keeps SIGTERM's default (end at once): a blocking read of stdin would hold a clean exit back
        with serving(settings, warn=_warn) as server:
            anyio.run(run_stdio, server)


def _warn(message: str) -> None:
    sys.stderr.write(f"nlmsync: warning: {message}\n")
    sys.stderr.flush()


def _announce(url: str) -> None:
    sys.stdout.write(url + "\n")
    sys.stdout.flush()


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM (a service manager stopping the HTTP server) ends the run cleanly: exit 0, the state file
    closed on the way out. uvicorn first shuts HTTP down gracefully, then re-raises the signal."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _exit_cleanly)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _exit_cleanly(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)
