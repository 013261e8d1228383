"""nlmsync's own MCP server (`nlmsync serve`): vault search, large-note reading, notebook asking.

Tools: `search_notes`, `read_note`, `get_chunk` (the vault, `VaultTools`), `ask_notebook` and
`refresh_notebook` (the notebook, through the `Orchestrator`). Inputs are typed with pydantic; each
answer is its result model as one compact JSON text (`_arguments.StrictToolServer`); the notebook tools answer
what a model needs of a run (`_notebook_answers`), where the command line's `--json` lists every note. Any
`NlmsyncError` becomes a tool error carrying its one-line message (a path, a field — never note text). Vault
tools are synchronous, so the SDK runs them on worker threads and searches proceed concurrently; notebook tools are serialized by an in-process lock and
by the store's cross-process writer lock the orchestrator takes.

Unattended, the notebook tools keep one view of the plan's usage allowance (read at most once a minute, so a
question costs no extra call) and, when the Google login expired beyond renewal, wait for a login made
elsewhere: said once (`warn`), each call answered at once with a clear error meanwhile, `refresh_auth` tried
every minute in the server's lifespan, and the tools answer again by themselves once it works.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import partial
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from nlmsync import __version__
from nlmsync._text import visible
from nlmsync.app import Allowance, LoginWait, Orchestrator
from nlmsync.app.servers import connect_server
from nlmsync.config import Settings
from nlmsync.errors import AuthenticationRequiredError, NlmsyncError, PartialFailure
from nlmsync.notebooklm import login_command
from nlmsync.reading import NoteReading
from nlmsync.search import NoteIndex
from nlmsync.server._arguments import StrictToolServer
from nlmsync.server._http import check_bind, run_http
from nlmsync.server._logging import plain_logging
from nlmsync.server._models import ChunkMatch, NoteMatch, SearchResult
from nlmsync.server._notebook_answers import NotebookAnswer, RefreshSummary
from nlmsync.server._vault import VaultTools
from nlmsync.server._warmup import IndexWarmup
from nlmsync.store import StateStore
from nlmsync.store.db import open_database
from nlmsync.sync import RefreshReport

__all__ = [
    "ChunkMatch", "IndexWarmup", "NoteMatch", "SearchResult", "VaultTools", "build_server", "check_bind",
    "plain_logging", "run_http", "run_stdio", "serving",
]

INSTRUCTIONS = """The user's markdown notes (their vault) and their NotebookLM notebook.
search_notes finds notes (and the vault's PDFs and documents) and the passages in them that match; read_note and
get_chunk read them, a document's text with a [page N] line above each page.
ask_notebook asks the notebook a question with the notes it needs; refresh_notebook uploads notes."""

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from nlmsync.app.login_wait import Sleep

T = TypeVar("T")
# What a client may assume of each tool: the vault tools read local notes only; the notebook tools reach
# NotebookLM and may delete sources (a replaced note's old source, a note evicted to make room), and a refresh
# asked twice does nothing more the second time, where each question is a new turn of its conversation.
READS_THE_VAULT = ToolAnnotations(read_only_hint=True, open_world_hint=False)
ASKS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True)
UPLOADS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True)
_Time = Annotated[str, Field(max_length=20)] | Annotated[float, Field(ge=0)]  # "0:05:00", "300" or 300


def _tool_error(exc: NlmsyncError) -> ToolError:
    """The error as one line, with the hint worded for a client where the command line's would mislead it (a
    control character in a path the client gave, a newline, is written as an escape)."""
    hint = exc.client_hint or exc.hint
    return ToolError(visible(f"{exc.message} (hint: {hint})" if hint else exc.message))


def _call(fn: Callable[[], T]) -> T:
    try:
        return fn()
    except NlmsyncError as exc:
        raise _tool_error(exc) from None


class _Notebook:
    """Runs the orchestrator for the notebook tools, one call at a time in this process; keeps the allowance
    and waits for a login across calls (see the module docstring)."""

    def __init__(self, settings: Settings, index: NoteIndex, notebook_server: Any,
                 warn: Callable[[str], None] | None = None, sleep: Sleep = anyio.sleep) -> None:
        self.settings = settings
        self.index = index
        self.notebook_server = notebook_server
        self.allowance = Allowance()
        self.login = LoginWait(sleep=sleep)
        self.tasks: TaskGroup | None = None
        """The server's lifespan, where the wait for a login runs (None outside it: an error is just answered)."""
        self._warn = warn or (lambda message: None)
        self._lock = anyio.Lock()

    @asynccontextmanager
    async def lifespan(self, server: MCPServer) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            self.tasks = tasks
            try:
                yield None
            finally:
                self.tasks = None
                tasks.cancel_scope.cancel()

    def _spec(self) -> Any:
        return self.settings.server if self.notebook_server is None else self.notebook_server

    @asynccontextmanager
    async def _orchestrator(self) -> AsyncIterator[Orchestrator]:
        store = StateStore.open(self.settings.state_path, self.settings)
        try:
            async with connect_server(self.settings, self._spec()) as client:
                yield Orchestrator(self.settings, store, client, index=self.index, allowance=self.allowance)
        finally:
            store.close()

    async def run(self, action: Callable[[Orchestrator], Awaitable[T]]) -> T:
        async with self._lock:
            if self.login.waiting:
                raise _tool_error(self.login.refusal())
            try:
                async with self._orchestrator() as orchestrator:
                    return await action(orchestrator)
            except AuthenticationRequiredError as exc:
                if self.tasks is not None and self.login.lost(exc):
                    self._warn(f"{exc.message}: the notebook tools wait for a Google login (run {login_command()}); "
                               f"refresh_auth is tried every {self.login.retry_every:g} s")
                    self.tasks.start_soon(self._wait_for_login)
                raise _tool_error(exc) from None
            except NlmsyncError as exc:
                raise _tool_error(exc) from None

    async def _wait_for_login(self) -> None:
        await self.login.wait(self._renew)
        self._warn("the Google login works again: the notebook tools answer again")

    async def _renew(self) -> None:
        async with connect_server(self.settings, self._spec()) as client:
            await client.renew_login()


@contextmanager
def serving(settings: Settings, *, notebook_server: Any = None, warn: Callable[[str], None] | None = None,
            sleep: Sleep = anyio.sleep) -> Iterator[MCPServer]:
    """`build_server` over the vault's index cached in the state file, which starts being brought up to date
    at once in the background (`IndexWarmup`; `warn` hears of a vault without notes, and of a wait for a
    login); the build is stopped and the file closed on exit.

    Raises:
        StateError: the state file cannot be used.
    """
    db = open_database(settings.state_path)
    try:
        index = NoteIndex(settings.vault, db, settings)
        warmup = IndexWarmup(index, warn)
        server = build_server(settings, index, notebook_server=notebook_server, warmup=warmup, warn=warn,
                              sleep=sleep)
        warmup.start()
        try:
            yield server
        finally:
            warmup.stop()
    finally:
        db.close()


def build_server(settings: Settings, index: NoteIndex, *, notebook_server: Any = None,
                 warmup: IndexWarmup | None = None, warn: Callable[[str], None] | None = None,
                 sleep: Sleep = anyio.sleep) -> MCPServer:
    """The MCP server over `settings.vault`, searching with `index` (the caller owns its state file;
    `serving` opens and closes it). `notebook_server` overrides `settings.server` for the notebook
    tools (an in-process server in tests). With `warmup` (the index being built in the background), a
    search waits for it to finish, sending progress notifications to a client that asked for them.
    `warn` hears that the notebook tools wait for a login, and that they answer again; `sleep` is what the wait
    sleeps on between tries.
    """
    vault = VaultTools(settings, index)
    notebook = _Notebook(settings, index, notebook_server, warn, sleep)
    server = StrictToolServer("nlmsync", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING",
                              lifespan=notebook.lifespan)

    @server.strict_tool("Find the user's notes about something. Answers the best notes first, each with its "
                        "path, score, the query's words it holds, whether ask_notebook would use it (selected), "
                        "and its best passages (chunk_id, character offsets, snippet).", READS_THE_VAULT)
    async def search_notes(
        ctx: Context,
        query: Annotated[str, Field(min_length=1, max_length=2000, description="What to look for, in words.")],
        limit: Annotated[int, Field(ge=1, le=50, description="Most notes.")] = 10,
        chunks_per_note: Annotated[int, Field(ge=1, le=10, description="Most passages per note.")] = 3,
    ) -> SearchResult:
        if warmup is not None:
            await warmup.wait(ctx.report_progress)
        return await anyio.to_thread.run_sync(lambda: _call(lambda: vault.search_notes(query, limit, chunks_per_note)))

    @server.strict_tool("Read a note, or a PDF or document of the vault (its text, each page under a [page N] "
                        "line). A small one comes whole; a large one as a preview with hints, then by "
                        "chunk=N or chunks='N-M', by start_time/end_time in a transcript, or by query=… for "
                        "the passages that match plus its beginning, middle and end.", READS_THE_VAULT)
    def read_note(
        path: Annotated[str, Field(min_length=1, max_length=4096, description="The note, e.g. notes/heapsort.md")],
        chunk: Annotated[int | None, Field(ge=0, description="One chunk by number, from 0.")] = None,
        chunks: Annotated[str | None, Field(max_length=40, description="e.g. '20-25'")] = None,
        start_time: Annotated[_Time | None, Field(description="H:MM:SS, MM:SS or seconds")] = None,
        end_time: Annotated[_Time | None, Field(description="H:MM:SS, MM:SS or seconds")] = None,
        query: Annotated[str | None, Field(max_length=2000, description="Words to find in the note.")] = None,
        full: Annotated[bool, Field(description="The whole note, however large.")] = False,
        limit: Annotated[int, Field(ge=4, le=30, description="Most chunks for a query.")] = 10,
    ) -> NoteReading:
        return _call(lambda: vault.read_note(path, chunk=chunk, chunks=chunks, start_time=start_time,
                                             end_time=end_time, query=query, full=full, limit=limit))

    @server.strict_tool("Read one passage by the chunk_id search_notes gave, with `surrounding` passages "
                        "before and after it.", READS_THE_VAULT)
    def get_chunk(
        chunk_id: Annotated[str, Field(min_length=3, max_length=4200, description="PATH:N, from search_notes")],
        surrounding: Annotated[int, Field(ge=0, le=5, description="Passages on each side.")] = 0,
    ) -> NoteReading:
        return _call(lambda: vault.get_chunk(chunk_id, surrounding))

    @server.strict_tool("Ask the user's NotebookLM notebook. The notes the question needs are uploaded first. "
                        "Answers the answer, its citations (note, heading, quote), the notes chosen and what was "
                        "uploaded. Follows up the latest conversation if the question is about its notes, else "
                        "starts one.", ASKS)
    async def ask_notebook(
        question: Annotated[str, Field(min_length=1, max_length=10_000, description="The question, in words.")],
        conversation_id: Annotated[str | None, Field(max_length=200, description="Continue this conversation "
                                                     "(an earlier answer's conversation_id).")] = None,
        new: Annotated[bool, Field(description="Start a new conversation.")] = False,
    ) -> NotebookAnswer:
        return NotebookAnswer.of(await notebook.run(lambda o: o.ask(question, conversation_id=conversation_id,
                                                                    new=new)))

    @server.strict_tool("Upload notes to the user's NotebookLM notebook: the paths given and the notes a query "
                        "needs (neither: bring the notes uploaded before up to date). Answers counts of what was "
                        "done and the notes and packs changed: added, replaced, renamed, evicted to make room, "
                        "excluded or failed.", UPLOADS)
    async def refresh_notebook(
        paths: Annotated[list[str] | None, Field(max_length=500, description="Note paths.")] = None,
        query: Annotated[str | None, Field(max_length=2000, description="And the notes that match these words "
                                                                      "best.")] = None,
        dry_run: Annotated[bool, Field(description="Only say what would be done.")] = False,
    ) -> RefreshSummary:
        checked = [_call(partial(vault.open_note, p))[0] for p in paths or []]

        async def refresh(orchestrator: Orchestrator) -> RefreshReport:
            try:
                return await orchestrator.refresh(checked, query=query, dry_run=dry_run)
            except PartialFailure as exc:
                if isinstance(exc.report, RefreshReport):
                    return exc.report
                raise

        return RefreshSummary.of(await notebook.run(refresh))

    return server


async def run_stdio(server: MCPServer) -> None:
    """Serve over stdin/stdout until the client closes the stream."""
    await server.run_stdio_async()
