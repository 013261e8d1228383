"""The fake NotebookLM behind an MCP server: the real tools' names and input schemas, faults applied per call.

`build_fake_server(fake)` returns an `MCPServer` whose `tools/list` input schemas match the real
`notebooklm-mcp` 0.15.8 ones (same parameters, types, defaults, required lists, and
`additionalProperties: false`, so unknown arguments are rejected as the real server does), less the tools
`Faults.without_tools` leaves out (as an older server lacks them: a call answers "Unknown tool"). Each call
goes through `FakeNotebookLM.plan` (latency, drops, in-band errors) and `FakeNotebookLM.apply`. A
`notebook_query` whose latency outlasts its `timeout` budget answers, when the budget runs out, with the
real server's in-band "deadline exceeded" error.

`serve_in_process(switches, state_path)` is the fake of `--server "fake SWITCH…"`: the switches read as
`nlmsync fake-server` reads them, the server built to be served inside the client's own process.

Dropping a connection: in a `nlmsync fake-server` process (`exit_on_drop=True`) the process exits at once,
after saving its state; served in-process through `transports.in_process_transport`, the connections are
killed the same way; otherwise (a plain `mcp.Client(server)`) the call fails with an MCP "connection
closed" error.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, NoReturn

import anyio
from mcp import MCPError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import CONNECTION_CLOSED
from pydantic import Field, ValidationError

from nlmsync.fake.faults import parse_fake_options
from nlmsync.fake.files import Processing
from nlmsync.fake.state import DEFAULT_QUERY_TIMEOUT, FakeNotebookLM
from nlmsync.notebooklm.transports import drop_connections

__all__ = ["DROP_EXIT_CODE", "FAKE_SERVER_NAME", "build_fake_server", "serve_http", "serve_in_process"]

FAKE_SERVER_NAME = "nlmsync-fake-notebooklm"
DROP_EXIT_CODE = 75

NotebookId = Annotated[str, Field(description="Notebook UUID")]
SourceId = Annotated[str, Field(description="Source UUID")]
IdList = str | list[str] | None
Confirm = Annotated[bool, Field(description="Must be true: deleting cannot be undone")]
Wait = Annotated[bool, Field(description="Wait until processing finishes (instant in the fake)")]
WaitTimeout = Annotated[float, Field(description="Seconds to wait when wait is true")]
Profile = Annotated[str | None, Field(description="A saved account profile (the fake has one account)")]


async def _drop_connection(fake: FakeNotebookLM, server: list[MCPServer], exit_on_drop: bool) -> NoReturn:
    fake.save()
    if exit_on_drop:
        os._exit(DROP_EXIT_CODE)
    if server and drop_connections(server[0]):
        await anyio.sleep_forever()
    raise MCPError(CONNECTION_CLOSED, "connection dropped by the fake server (fault injection)")


def _query_budget(tool: str, arguments: dict[str, Any]) -> float | None:
    """The wall-clock budget of a `notebook_query` (its `timeout`, else the real server's default)."""
    if tool != "notebook_query":
        return None
    return arguments.get("timeout") or DEFAULT_QUERY_TIMEOUT


def _runner(fake: FakeNotebookLM, server: list[MCPServer], exit_on_drop: bool) -> Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]:
    async def run(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        fake.polls.under_way += 1
        try:
            return await answer(tool, arguments)
        finally:
            fake.polls.under_way -= 1
            fake.polls.answered()

    async def answer(tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        plan = fake.plan(tool)
        budget = _query_budget(tool, arguments)
        if budget is not None and plan.latency > budget:
            # Like the real server: the query gives up when its own budget runs out, and says so in-band.
            await anyio.sleep(budget)
            return fake.apply(tool, arguments, replace(plan, deadline_exceeded=True, drop=None))
        if plan.latency > 0:
            await anyio.sleep(plan.latency)
        if plan.drop == "before":
            fake.record_dropped(tool, arguments)
            await _drop_connection(fake, server, exit_on_drop)
        result = fake.apply(tool, arguments, plan)
        processing = fake.take_processing()
        if processing is not None:
            result = await _processed(fake, processing)
        if plan.drop == "after":
            await _drop_connection(fake, server, exit_on_drop)
        return result

    return run


async def _processed(fake: FakeNotebookLM, processing: Processing) -> dict[str, Any]:
    """Wait, poll by poll, for a file the add left processing; the add's answer."""
    fake.polls.waiting += 1
    try:
        while (answer := fake.poll(processing)) is None:
            await fake.polls.next()
    finally:
        fake.polls.waiting -= 1
    return answer


def _strict(tool: Tool) -> Tool:
    """Make the published schema match the real server's (no titles, no other arguments: `_FakeServer` refuses
    them)."""
    schema = {key: value for key, value in tool.parameters.items() if key != "title"}
    schema["properties"] = {name: {k: v for k, v in prop.items() if k != "title"}
                            for name, prop in schema.get("properties", {}).items()}
    schema["additionalProperties"] = False
    tool.parameters = schema
    return tool


class _FakeServer(MCPServer):
    """The fake's MCP server: a call with an argument its tool does not take is refused, as the real server
    refuses it (its schemas say `additionalProperties: false`), where the SDK would drop the argument and run
    the tool."""

    def __init__(self, name: str, *, tools: list[Tool], **settings: Any) -> None:
        super().__init__(name, tools=tools, **settings)
        self._takes = {tool.name: frozenset(tool.parameters["properties"]) for tool in tools}

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        unknown = [key for key in arguments if key not in self._takes.get(name, arguments)]
        if unknown:  # said in pydantic's words, as the SDK says any other argument error
            error = ValidationError.from_exception_data(
                f"{name}Arguments", [{"type": "extra_forbidden", "loc": (key,), "input": arguments[key]}
                                     for key in unknown])
            raise ToolError(f"Error executing tool {name}: {error}") from error
        return await super().call_tool(name, arguments, context)


def _tools(run: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]) -> list[Callable[..., Any]]:
    async def server_info() -> dict[str, Any]:
        """Version and login state of the (fake) NotebookLM server."""
        return await run("server_info", {})

    async def notebook_list(
        max_results: Annotated[int, Field(description="Most notebooks to return")] = 100,
    ) -> dict[str, Any]:
        """List the notebooks."""
        return await run("notebook_list", {"max_results": max_results})

    async def notebook_get(notebook_id: NotebookId) -> dict[str, Any]:
        """One notebook with its sources (ids and titles)."""
        return await run("notebook_get", {"notebook_id": notebook_id})

    async def notebook_create(
        title: Annotated[str, Field(description="Title of the new notebook")] = "",
    ) -> dict[str, Any]:
        """Create a notebook."""
        return await run("notebook_create", {"title": title})

    async def notebook_delete(notebook_id: NotebookId, confirm: Confirm = False) -> dict[str, Any]:
        """Delete a notebook (needs confirm=true)."""
        return await run("notebook_delete", {"notebook_id": notebook_id, "confirm": confirm})

    async def source_add(
        notebook_id: NotebookId,
        source_type: Annotated[str, Field(description="text, url (kept as text) or file")],
        url: Annotated[str | None, Field(description="URL for source_type=url")] = None,
        urls: Annotated[IdList, Field(description="Several URLs (accepted, not used by the fake)")] = None,
        text: Annotated[str | None, Field(description="Text for source_type=text")] = None,
        title: Annotated[str | None, Field(description="Display title")] = None,
        file_path: Annotated[str | None, Field(description="Local file path for source_type=file")] = None,
        document_id: Annotated[str | None, Field(description="Not supported by the fake")] = None,
        doc_type: Annotated[str, Field(description="Not used by the fake")] = "doc",
        wait: Wait = False,
        wait_timeout: WaitTimeout = 120.0,
    ) -> dict[str, Any]:
        """Add a source to a notebook."""
        return await run("source_add", {
            "notebook_id": notebook_id, "source_type": source_type, "url": url, "urls": urls, "text": text,
            "title": title, "file_path": file_path, "document_id": document_id, "doc_type": doc_type,
            "wait": wait, "wait_timeout": wait_timeout})

    async def source_delete(
        source_id: Annotated[str | None, Field(description="One source to delete")] = None,
        source_ids: Annotated[IdList, Field(description="Several sources to delete")] = None,
        confirm: Confirm = False,
    ) -> dict[str, Any]:
        """Delete sources (needs confirm=true)."""
        return await run("source_delete", {"source_id": source_id, "source_ids": source_ids, "confirm": confirm})

    async def source_rename(
        notebook_id: Annotated[str, Field(description="Notebook holding the source")],
        source_id: Annotated[str, Field(description="Source to rename")],
        new_title: Annotated[str, Field(description="The new title")],
    ) -> dict[str, Any]:
        """Rename a source."""
        return await run("source_rename", {"notebook_id": notebook_id, "source_id": source_id,
                                           "new_title": new_title})

    async def source_describe(source_id: SourceId) -> dict[str, Any]:
        """A short summary and keywords of a source."""
        return await run("source_describe", {"source_id": source_id})

    async def source_get_content(
        source_id: SourceId,
        wait: Wait = False,
        wait_timeout: WaitTimeout = 120.0,
        poll_interval: Annotated[float, Field(description="Seconds between checks when waiting")] = 3.0,
    ) -> dict[str, Any]:
        """The text of a source."""
        return await run("source_get_content", {"source_id": source_id, "wait": wait, "wait_timeout": wait_timeout,
                                                "poll_interval": poll_interval})

    async def notebook_query(
        notebook_id: NotebookId,
        query: Annotated[str, Field(description="The question")],
        source_ids: Annotated[IdList, Field(description="Sources to use (default: all)")] = None,
        conversation_id: Annotated[str | None, Field(description="Continue this conversation")] = None,
        timeout: Annotated[float | None, Field(description="Time budget in seconds")] = None,
        new_conversation: Annotated[bool, Field(description="Start a new conversation")] = False,
    ) -> dict[str, Any]:
        """Ask the notebook: answers with the best-matching passages of the sources, quoted and cited."""
        return await run("notebook_query", {
            "notebook_id": notebook_id, "query": query, "source_ids": source_ids,
            "conversation_id": conversation_id, "timeout": timeout, "new_conversation": new_conversation})

    async def refresh_auth(profile: Profile = None) -> dict[str, Any]:
        """Reload the Google login from disk (after `nlm login`), or renew an expired one."""
        return await run("refresh_auth", {"profile": profile})

    async def usage_get(profile: Profile = None) -> dict[str, Any]:
        """How much of the plan's usage allowance is left in each window, when it resets, and the tier."""
        return await run("usage_get", {"profile": profile})

    return [server_info, notebook_list, notebook_get, notebook_create, notebook_delete, source_add, source_delete,
            source_rename, source_describe, source_get_content, notebook_query, refresh_auth, usage_get]


def build_fake_server(fake: FakeNotebookLM, *, exit_on_drop: bool = False) -> MCPServer:
    """An MCP server exposing `fake` with the real server's tool names and input schemas."""
    built: list[MCPServer] = []  # filled below: the tools need the server to drop its connections
    run = _runner(fake, built, exit_on_drop)
    tools = [_strict(Tool.from_function(fn, structured_output=True)) for fn in _tools(run)
             if fn.__name__ not in fake.faults.without_tools]
    server = _FakeServer(FAKE_SERVER_NAME, instructions="Offline twin of the NotebookLM MCP server (nlmsync).",
                         tools=tools, log_level="WARNING")
    built.append(server)
    return server


def serve_in_process(switches: Sequence[str], state_path: Path | None) -> tuple[MCPServer, Callable[[], None]]:
    """The fake's MCP server for `switches` (the words after `fake`), and the function that saves its state.

    The fake keeps its notebooks in `state_path` unless `--state` names another file.

    Raises:
        ValueError: a switch cannot be read (one line, naming the switch).
        InputError: the state file cannot be read.
    """
    options = parse_fake_options(switches)
    fake = FakeNotebookLM(capacity=options.capacity, faults=options.faults,
                          state_path=options.state if options.state is not None else state_path)
    return build_fake_server(fake), fake.save


async def serve_http(server: MCPServer, *, host: str, port: int, announce: Callable[[str], None],
                     on_shutdown: Callable[[], None] = lambda: None,
                     on_serving: Callable[[Callable[[], None]], None] = lambda stop: None) -> None:
    """Serve streamable HTTP at http://host:port/mcp (port 0 = a free port); `announce` gets the URL once bound.

    `on_shutdown` runs after a graceful stop (SIGINT/SIGTERM), before uvicorn re-raises the signal and the
    process ends without unwinding — code after this call would never run then. `on_serving` gets a function
    that stops the server gracefully from any thread (how `nlmsync.testing` ends a server it runs in a thread).
    """
    import uvicorn

    class _Server(uvicorn.Server):
        async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
            await super().shutdown(sockets)
            on_shutdown()

    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    # Listening before announcing: a client that connects at once waits in the backlog instead of failing.
    sock.listen(128)
    bound_port = sock.getsockname()[1]
    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    shown_host = f"[{host}]" if ":" in host else host
    http_server = _Server(config)

    def stop() -> None:
        http_server.should_exit = True

    on_serving(stop)
    announce(f"http://{shown_host}:{bound_port}/mcp")
    await http_server.serve(sockets=[sock])
