"""The NotebookLM server a run talks to: `connect_server` is the client's `connect` with this app's wiring.

The state directory (where `--server fake` keeps its notebooks) is the state file's, and `--server fake` is
served by the bundled fake (`nlmsync.fake.serve_in_process`): the app puts the two together so that
the client package never imports the fake.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp.server.mcpserver import MCPServer

from nlmsync.config import Settings
from nlmsync.fake import serve_in_process
from nlmsync.notebooklm import NotebookLMClient, connect

__all__ = ["connect_server"]


@asynccontextmanager
async def connect_server(settings: Settings, server: str | MCPServer | None = None) -> AsyncIterator[NotebookLMClient]:
    """A client for `server` (default `settings.server`: a spec, or an in-process server in tests).

    Raises:
        UsageError: the spec cannot be understood.
    """
    async with connect(settings.server if server is None else server, settings,
                       state_dir=settings.state_path.parent, in_process_fake=serve_in_process) as client:
        yield client
