"""Where the NotebookLM MCP server is: one `--server SPEC` resolved to a transport for `mcp.Client`.

`resolve_server(spec, state_dir=..., env=...)` understands
- `"fake"` (optionally followed by fake-server flags, e.g. `"fake --capacity 5"`): the bundled fake served
  in this process, keeping its notebooks in `<state_dir>/fake-notebooklm.json` (saved again when the client
  closes); no second process, no second import of the MCP SDK. The fake is built by the `in_process_fake`
  the caller hands in (the app passes the one of the fake package): the client package knows no fake;
- `"fake-stdio"` (same flags): the same fake run as a separate process over stdio,
  `python -m nlmsync fake-server --transport stdio --state <state_dir>/fake-notebooklm.json …` — the real
  server's transport, for tests of that boundary (a dropped connection is that process exiting);
- an `http://…/mcp` or `https://…/mcp` URL: streamable HTTP;
- any other string: a command line run as a stdio subprocess (the environment is passed through); a bare
  command name that is not on PATH is looked for beside this interpreter too, so a server installed in
  nlmsync's virtual environment is found when that environment is not activated (`.venv/bin/nlmsync`);
- an in-process `MCPServer` object (tests): served over memory streams by `in_process_transport`.

`in_process_transport` is also the seam for dropping an in-process connection: code running inside the
server (the fake's tools) calls `drop_connections(server)` to kill its connections exactly like a server
process that exits — the client's pending call fails with "connection closed" and the session is dead.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TextIO
from weakref import WeakKeyDictionary

import anyio
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer
from mcp.shared.memory import create_client_server_memory_streams
from pydantic import ValidationError

from nlmsync.errors import UsageError

__all__ = [
    "FAKE_STATE_FILE",
    "InProcessFake",
    "ServerTarget",
    "drop_connections",
    "in_process_transport",
    "resolve_server",
]

FAKE_STATE_FILE = "fake-notebooklm.json"
FAKE_SPEC = "fake"
FAKE_STDIO_SPEC = "fake-stdio"



class InProcessFake(Protocol):
    """Builds the fake served in this process for `--server "fake SWITCH…"`."""

    def __call__(self, switches: Sequence[str], state_path: Path | None) -> tuple[MCPServer, Callable[[], None]]:
        """The server for `switches` (the words after `fake`), and what saves its state when the client closes.

        `state_path` is where the fake keeps its notebooks unless a `--state` switch says otherwise.

        Raises:
            ValueError: a switch cannot be read (one line, naming the switch).
            InputError: the fake's state file cannot be read.
        """
        ...


# The kill switches of the in-process connections each server is serving right now.
_live_connections: WeakKeyDictionary[MCPServer, set[Callable[[], None]]] = WeakKeyDictionary()


def drop_connections(server: MCPServer) -> bool:
    """Kill every in-process connection `server` is serving (as if its process died); False when none."""
    kills = list(_live_connections.get(server, ()))
    for kill in kills:
        kill()
    return bool(kills)


def low_level_server(server: MCPServer) -> Server[Any]:
    """The low-level server `server` runs on, which serves it over a pair of streams.

    The one use of a private part of the MCP SDK: `MCPServer` has no public accessor for it in mcp 2.3 (the
    SDK's own in-memory client transport reads the same attribute). `tests/notebooklm/test_transports.py`
    fails on an mcp release that moves it.
    """
    return server._lowlevel_server  # pyright: ignore[reportPrivateUsage]


@asynccontextmanager
async def in_process_transport(server: MCPServer) -> AsyncIterator[Any]:
    """Serve `server` to one client over memory streams (a `mcp.Client` transport).

    Killing the connection (`drop_connections`) cancels the server side and closes its streams, so the
    client reads end-of-stream and its pending call fails with "connection closed".
    """
    lowlevel = low_level_server(server)
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        server_read, server_write = server_streams
        server_scope = anyio.CancelScope()
        kill = server_scope.cancel
        kills = _live_connections.setdefault(server, set())

        async def serve() -> None:
            with server_scope:
                await lowlevel.run(server_read, server_write, lowlevel.create_initialization_options())
            await server_write.aclose()
            await server_read.aclose()

        kills.add(kill)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                try:
                    yield client_streams
                finally:
                    server_scope.cancel()
        finally:
            kills.discard(kill)


@dataclass(frozen=True)
class ServerTarget:
    """A resolved `--server SPEC`; `label` names it in error messages."""

    kind: Literal["in-process", "stdio", "http"]
    label: str
    server: MCPServer | None = None
    params: StdioServerParameters | None = None
    url: str | None = None
    on_close: Callable[[], None] | None = None

    def close(self) -> None:
        """Run when the client is done with the server (the in-process fake saves its state file)."""
        if self.on_close is not None:
            self.on_close()

    def transport(self, errlog: TextIO) -> Any:
        """A fresh transport for `mcp.Client` (one per connection); `errlog` receives a subprocess's stderr."""
        if self.kind == "in-process":
            assert self.server is not None
            return in_process_transport(self.server)
        if self.kind == "http":
            assert self.url is not None
            return streamable_http_client(self.url)
        assert self.params is not None
        return _stdio_transport(self.params, errlog)


# The capture of the stderr of the server the current task's stdio transport runs (see `_ServerSaid`).
_SERVER_STDERR: ContextVar[TextIO | None] = ContextVar("server_stderr", default=None)
_SDK_STDIO_LOGGER = "mcp.client.stdio"


class _ServerSaid(logging.Filter):
    """The MCP SDK's stdio client logs what it could not take from the server — a line of its stdout that is no
    MCP message, a read that failed — with a traceback on stderr, ahead of nlmsync's own error. Inside one of
    nlmsync's stdio transports such a record is written instead as one line into the capture of that server's
    stderr, which an error about the server quotes (`server said: …`), and goes no further: the SDK's reader task
    runs in a copy of the transport's context, which says which capture. Elsewhere the record goes on as usual.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        capture = _SERVER_STDERR.get()
        if capture is None:
            return True
        said = record.getMessage()
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, ValidationError):
            problems = exc.errors()
            line = problems[0].get("input") if problems else None
            if isinstance(line, str):
                said = f"not an MCP message on stdout: {line[:200]!r}"
        elif exc is not None:
            said = f"{said}: {exc}"
        try:
            capture.write(" ".join(said.split()) + "\n")
        except (OSError, ValueError):  # the capture was closed with its session
            pass
        return False


@asynccontextmanager
async def _stdio_transport(params: StdioServerParameters, errlog: TextIO) -> AsyncIterator[Any]:
    """The SDK's stdio transport, with what its client logs of the server written to `errlog` (`_ServerSaid`)."""
    logger = logging.getLogger(_SDK_STDIO_LOGGER)
    if not any(isinstance(check, _ServerSaid) for check in logger.filters):
        logger.addFilter(_ServerSaid())
    token = _SERVER_STDERR.set(errlog)
    try:
        async with stdio_client(params, errlog=errlog) as streams:
            yield streams
    finally:
        _SERVER_STDERR.reset(token)


def _fake_command(extra_args: list[str], state_dir: Path | None) -> list[str]:
    command = [sys.executable, "-m", "nlmsync", "fake-server", "--transport", "stdio"]
    if state_dir is not None and "--state" not in extra_args:
        command += ["--state", str(state_dir / FAKE_STATE_FILE)]
    return command + extra_args


def _command_path(command: str, path: str | None) -> str:
    """`command` as given when it is a path or on `path`; else the command of that name beside this interpreter
    (the bin folder of the virtual environment nlmsync runs from), when there is one."""
    if os.sep in command or shutil.which(command, path=path):
        return command
    beside = Path(sys.executable).parent / command
    return str(beside) if shutil.which(str(beside)) else command


def login_command() -> str:
    """The real server's login as a message quotes it for a shell: `'nlm login'`, or with the path of the `nlm`
    installed beside nlmsync when none is on PATH (a virtual environment that is not activated)."""
    command = f"{shlex.quote(_command_path('nlm', None))} login"
    return command if "'" in command else f"'{command}'"


def _in_process_fake(in_process_fake: InProcessFake | None, switches: list[str], spec: str,
                     state_dir: Path | None) -> ServerTarget:
    if in_process_fake is None:
        raise UsageError(f"--server '{spec}': no in-process fake was given here; use 'fake-stdio' instead")
    try:
        server, save = in_process_fake(switches, state_dir / FAKE_STATE_FILE if state_dir else None)
    except ValueError as exc:
        raise UsageError(f"--server '{spec}': {exc}") from None
    return ServerTarget(kind="in-process", label="the fake NotebookLM server", server=server, on_close=save)


def resolve_server(spec: str | MCPServer, *, state_dir: Path | None = None, env: Mapping[str, str] | None = None,
                   in_process_fake: InProcessFake | None = None) -> ServerTarget:
    """Resolve a server spec (see the module docstring); `in_process_fake` builds the fake for `"fake"`.

    Raises:
        UsageError: an empty spec, a command line that cannot be split, a fake switch that cannot be read, or
            `"fake"` without an `in_process_fake`.
        InputError: the in-process fake's state file cannot be read.
    """
    if isinstance(spec, MCPServer):
        return ServerTarget(kind="in-process", label="the in-process server", server=spec)
    text = spec.strip()
    if not text:
        raise UsageError("--server is empty: give 'fake', 'fake-stdio', a command line, or an http://…/mcp URL")
    if text.startswith(("http://", "https://")):
        return ServerTarget(kind="http", label=text, url=text)
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--server '{text}': cannot split the command line ({exc})") from None
    if words[0] == FAKE_SPEC:
        return _in_process_fake(in_process_fake, words[1:], text, state_dir)
    if words[0] == FAKE_STDIO_SPEC:
        words = _fake_command(words[1:], state_dir)
        label = "the fake NotebookLM server"
    else:
        label = f"the MCP server '{words[0]}'"
    full_env = {**os.environ, **(env or {})}
    params = StdioServerParameters(command=_command_path(words[0], full_env.get("PATH")), args=words[1:],
                                   env=full_env)
    return ServerTarget(kind="stdio", label=label, params=params)
