"""`NotebookLMClient`: typed calls to the NotebookLM MCP server over one long-lived, self-healing session.

Use it through `connect`::

    async with connect(settings.server, settings, state_dir=vault / ".nlmsync") as client:
        details = await client.notebook_get(notebook_id)

The session is opened on the first call and kept for the whole run; when it dies (a connection problem
or a timeout) the next call opens a new one. Each call has a timeout (`Settings.query_timeout` for
queries, `Settings.call_timeout` otherwise) and follows the retry policy (`retry.py`): only the
idempotent read-only tools are retried, and only on connection problems. A call that meets an expired login
is sent once more after the server renewed it (`login.py`). Results are checked against the models in
`models.py`; in-band errors become the `NotebookLMError` subclasses (`classify.py`).

The session lives in a runner task of the `connect` task group, not in the caller's task, so calls may come
from any task (concurrent uploads) and a dead session can be replaced from any of them.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import anyio
import mcp
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, Implementation, TextContent

from nlmsync import __version__
from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionLostError,
    ConnectionProblem,
    MalformedResponseError,
    NotebookLMError,
    RateLimitedError,
    ServerTimeoutError,
)
from nlmsync.notebooklm.classify import (
    classify_exception,
    classify_in_band_error,
    classify_tool_error_text,
    doing,
    is_unknown_tool,
)
from nlmsync.notebooklm.login import LOGIN_TOOLS, LoginRenewal, renewable
from nlmsync.notebooklm.models import (
    AddedSource,
    AuthRefreshed,
    CreatedNotebook,
    DeletedNotebook,
    DeletedSource,
    NotebookDetails,
    NotebookList,
    QueryAnswer,
    RenamedSource,
    ResultT,
    ServerInfo,
    SourceContent,
    SourceDescription,
    Usage,
    parse_result,
)
from nlmsync.notebooklm.retry import IDEMPOTENT_TOOLS, AddRateLimiter, Sleep, call_with_retry
from nlmsync.notebooklm.transports import InProcessFake, ServerTarget, resolve_server
from nlmsync.vault import is_media

__all__ = ["NotebookLMClient", "connect", "result_payload"]

# A query (or an add that waits for processing) gets this much longer on the client than the budget it passes
# to the server, so the server's own "deadline exceeded" answer arrives before the client gives up.
QUERY_GRACE_SECONDS = 15.0
CLOSE_GRACE_SECONDS = 5.0
STDERR_TAIL_CHARS = 300

T = TypeVar("T")


def result_payload(tool: str, result: CallToolResult) -> dict[str, Any]:
    """The JSON object a tool answered, or the typed error for an error result.

    Raises:
        NotebookLMError: the subclass for an MCP tool error or an in-band `status: "error"` result.
        MalformedResponseError: no JSON object, or no `status: "success"`.
    """
    texts = [block.text for block in result.content if isinstance(block, TextContent)]
    if result.is_error:
        raise classify_tool_error_text(tool, "\n".join(texts))
    payload: Any = result.structured_content
    if payload is None:
        try:
            payload = json.loads(texts[0]) if texts else None
        except json.JSONDecodeError:
            payload = None
    if not isinstance(payload, dict):
        raise MalformedResponseError(f"{doing(tool)}: malformed response from the server: the result is not a JSON object",
                                     tool=tool, raw="\n".join(texts)[:500])
    status = payload.get("status")
    if status == "error" or (status != "success" and isinstance(payload.get("error"), str)):
        # `refresh_auth` answers a login it could not renew with status "expired"
        raise classify_in_band_error(tool, payload)
    if status != "success":
        raise MalformedResponseError(f"{doing(tool)}: malformed response from the server: field 'status' is {status!r}",
                                     tool=tool, raw=str(payload)[:500])
    return payload


@dataclass(eq=False)
class _Session:
    """One MCP session, owned by a runner task; `dead` once a call saw the connection fail."""

    errlog: TextIO
    client: mcp.Client | None = None
    dead: bool = False
    close_requested: anyio.Event = field(default_factory=anyio.Event)
    finished: anyio.Event = field(default_factory=anyio.Event)

    def stderr_tail(self) -> str:
        try:
            self.errlog.seek(0)
            lines = [line.strip() for line in self.errlog.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        return lines[-1][-STDERR_TAIL_CHARS:] if lines else ""


class NotebookLMClient:
    """Typed NotebookLM tools over one MCP session (see the module docstring). Create it with `connect`."""

    def __init__(self, target: ServerTarget, settings: Settings, task_group: TaskGroup, *,
                 sleep: Sleep = anyio.sleep) -> None:
        self.target = target
        self.settings = settings
        self._task_group = task_group
        self._sleep = sleep
        self._session: _Session | None = None
        self._connect_lock = anyio.Lock()
        self._add_limiter = AddRateLimiter(settings.add_rate_per_minute, sleep=sleep)
        self.login = LoginRenewal()
        self.connections_opened = 0

    # ----- session management -----

    async def _run_session(self, session: _Session, *, task_status: TaskStatus[None]) -> None:
        started = False
        try:
            with anyio.CancelScope(deadline=anyio.current_time() + self.settings.call_timeout) as scope:
                async with mcp.Client(self.target.transport(session.errlog),
                                      client_info=Implementation(name="nlmsync", version=__version__)) as client:
                    scope.deadline = math.inf
                    session.client = client
                    started = True
                    task_status.started()
                    await session.close_requested.wait()
            if not started:
                raise TimeoutError(f"no answer from {self.target.label} within {self.settings.call_timeout:g} s")
        except Exception:
            if not started:
                raise
            # Once started, a failing connection only ends this session: calls on it fail on their own, and
            # the next call sees `dead` and opens a new one.
        finally:
            session.dead = True
            session.finished.set()

    async def _open(self, tool: str) -> _Session:
        # The stderr capture is closed by _retire, or below when opening fails.
        errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        session = _Session(errlog=errlog)
        try:
            await self._task_group.start(self._run_session, session)
        except Exception as exc:
            error = classify_exception(exc, tool=tool, phase="connect", server=self.target.label)
            tail = session.stderr_tail()
            session.errlog.close()
            if tail and isinstance(error, ConnectionProblem):
                error.message = f"{error.message} (server said: {tail})"
            raise error from exc
        self.connections_opened += 1
        return session

    async def _retire(self, session: _Session) -> None:
        session.dead = True
        session.close_requested.set()
        with anyio.move_on_after(CLOSE_GRACE_SECONDS, shield=True):
            await session.finished.wait()
        session.errlog.close()

    async def _live_session(self, tool: str) -> _Session:
        current = self._session
        if current is not None and not current.dead:
            return current
        async with self._connect_lock:
            current = self._session
            if current is not None and not current.dead:
                return current
            if current is not None:
                await self._retire(current)
            self._session = None
            self._session = await self._open(tool)
            return self._session

    async def aclose(self) -> None:
        """Close the session (done by `connect` on exit)."""
        if self._session is not None:
            await self._retire(self._session)
            self._session = None

    # ----- one call -----

    async def _on_session(self, tool: str, timeout: float, action: Callable[[mcp.Client], Awaitable[T]]) -> T:
        """Run `action` on the live session within `timeout`; a connection problem marks the session dead."""
        session = await self._live_session(tool)
        assert session.client is not None
        try:
            with anyio.fail_after(timeout):
                return await action(session.client)
        except Exception as exc:
            error = classify_exception(exc, tool=tool, phase="call", server=self.target.label)
            if isinstance(error, ServerTimeoutError):
                setting = "query_timeout" if tool == "notebook_query" else "call_timeout"
                error.message = f"{error.message} (gave up after {timeout:g} s)"
                error.hint = f"a slow server needs more time: raise {setting} (config or NLMSYNC_{setting.upper()})"
            if isinstance(error, ConnectionProblem):
                session.dead = True
            raise error from exc

    async def _attempt(self, tool: str, arguments: dict[str, Any], timeout: float) -> dict[str, Any]:
        result = await self._on_session(tool, timeout, lambda client: client.call_tool(tool, arguments))
        return result_payload(tool, result)

    async def tool_input_schemas(self) -> dict[str, dict[str, Any]]:
        """The input schema of every tool the server lists (`tools/list`), by tool name; retried like a read."""

        async def attempt() -> dict[str, dict[str, Any]]:
            listed = await self._on_session("tools/list", self.settings.call_timeout,
                                            lambda client: client.list_tools())
            return {tool.name: dict(tool.input_schema) for tool in listed.tools}

        return await call_with_retry(attempt, idempotent=True, attempts=self.settings.retry_attempts,
                                     retry_on_connection_issue=self.settings.retry_on_connection_issue,
                                     sleep=self._sleep)

    async def call(self, tool: str, arguments: dict[str, Any], *, timeout: float | None = None) -> dict[str, Any]:
        """Call any tool; the successful JSON payload (retried on a connection problem if the tool is idempotent).
        A call that meets an expired login is sent again after `refresh_auth` renewed it (`login.py`).

        Raises:
            AuthenticationRequiredError: the login is needed and could not be renewed (its hint says what to do).
            ConnectionLostError: an add that waited for processing met an expired login: whether it was made is
                not known (a fresh listing tells).
        """
        limit = timeout if timeout is not None else self.settings.call_timeout

        async def once() -> dict[str, Any]:
            return await call_with_retry(lambda: self._attempt(tool, arguments, limit),
                                         idempotent=tool in IDEMPOTENT_TOOLS, attempts=self.settings.retry_attempts,
                                         retry_on_connection_issue=self.settings.retry_on_connection_issue,
                                         sleep=self._sleep)

        while True:
            started = self.login.generation
            try:
                result = await once()
            except AuthenticationRequiredError as expired:
                if tool in LOGIN_TOOLS or not renewable(expired):
                    raise
                await self.login.renew(expired, started, self.refresh_auth)
                if tool == "source_add" and arguments.get("wait"):
                    raise ConnectionLostError(f"{doing(tool)}: the login expired while the add waited for processing; it "
                                              "was renewed, and whether the source was added is not known",
                                              tool=tool, raw=expired.raw) from expired
                continue  # sent again on the renewed login, which may have expired again meanwhile
            if tool not in LOGIN_TOOLS:  # a renewal itself going through says nothing of the login it gave
                self.login.worked(started)
            return result

    async def _typed(self, tool: str, model: type[ResultT], arguments: dict[str, Any], *,
                     timeout: float | None = None) -> ResultT:
        return parse_result(tool, model, await self.call(tool, arguments, timeout=timeout))

    # ----- the tools -----

    async def server_info(self) -> ServerInfo:
        return await self._typed("server_info", ServerInfo, {})

    async def refresh_auth(self) -> AuthRefreshed:
        """Ask the server to renew its Google login: reload it from disk (a `nlm login` made elsewhere) or renew
        it with the saved browser profile.

        Raises:
            AuthenticationRequiredError: it could not (the server's words say why).
        """
        return await self._typed("refresh_auth", AuthRefreshed, {})

    async def renew_login(self) -> AuthRefreshed:
        """`refresh_auth` for a command that waited for a login made elsewhere (a server without the tool is
        asked for a listing instead): once it works, the run's count of renewals starts again.

        Raises:
            AuthenticationRequiredError: there is still no working login.
        """
        try:
            renewed = await self.refresh_auth()
        except NotebookLMError as exc:
            if not is_unknown_tool(exc):
                raise
            await self.notebook_list(1)
            renewed = AuthRefreshed(message="a notebook listing works")
        self.login.restart()
        return renewed

    async def usage(self) -> Usage | None:
        """The plan's usage allowance and tier (`usage_get`); None from a server that has no such tool (an older
        or another server).

        Raises:
            NotebookLMError: the server has the tool and could not answer (a login needed, a connection problem,
                a malformed answer …).
        """
        try:
            return await self._typed("usage_get", Usage, {})
        except NotebookLMError as exc:
            if is_unknown_tool(exc):
                return None
            raise

    async def notebook_get(self, notebook_id: str) -> NotebookDetails:
        return await self._typed("notebook_get", NotebookDetails, {"notebook_id": notebook_id})

    async def notebook_list(self, max_results: int = 100) -> NotebookList:
        return await self._typed("notebook_list", NotebookList, {"max_results": max_results})

    async def notebook_create(self, title: str) -> CreatedNotebook:
        return await self._typed("notebook_create", CreatedNotebook, {"title": title})

    async def notebook_delete(self, notebook_id: str) -> DeletedNotebook:
        return await self._typed("notebook_delete", DeletedNotebook, {"notebook_id": notebook_id, "confirm": True})

    async def source_add_text(self, notebook_id: str, text: str, title: str, wait: bool | None = None) -> AddedSource:
        """Upload `text` as a text source titled `title` (`wait` defaults to `Settings.wait_for_processing`).

        An add the server refuses as rate-limited was not applied: it is sent again after a pause, at a
        lower rate (`AddRateLimiter`), a bounded number of times.

        Raises:
            RateLimitedError: still rate-limited after the last pause (or refused at once after that).
        """
        waiting = self.settings.wait_for_processing if wait is None else wait
        arguments: dict[str, Any] = {"notebook_id": notebook_id, "source_type": "text", "text": text,
                                     "title": title, "wait": waiting}
        return await self._add_limited(arguments, self.settings.call_timeout if waiting else None)

    async def source_add_file(self, notebook_id: str, file_path: str | os.PathLike[str], title: str) -> AddedSource:
        """Upload the file at `file_path` (made absolute: the server reads it from its own disk) as a source the
        server titles `title`. The server names a file source after the file and applies `title` by a rename once
        the source is processed, so it waits for the processing: up to the `media_timeout` setting for audio and
        video (NotebookLM transcribes them), the call timeout for the rest. The rename may not take: the title the
        notebook lists is the one to trust, not the one answered. Rate-limited adds are sent again as
        `source_add_text`'s are.

        Raises:
            FileOutsideServerFoldersError: the server may read only the folders NOTEBOOKLM_ALLOWED_FILE_DIRS names.
            RateLimitedError: still rate-limited after the last pause (or refused at once after that).
        """
        path = os.path.abspath(file_path)
        wait_timeout = self.settings.media_timeout if is_media(path) else self.settings.call_timeout
        arguments: dict[str, Any] = {"notebook_id": notebook_id, "source_type": "file", "file_path": path,
                                     "title": title, "wait": True}
        return await self._add_limited(arguments, wait_timeout)

    async def _add_limited(self, arguments: dict[str, Any], wait_timeout: float | None) -> AddedSource:
        limiter = self._add_limiter
        while True:
            if limiter.exhausted:
                raise RateLimitedError(f"{doing('source_add')}: not tried: {limiter.summary()}", tool="source_add")
            burst = await limiter.wait_turn()
            try:
                return await self._add_once(arguments, wait_timeout)
            except RateLimitedError as exc:
                if not limiter.limited(burst):
                    exc.message = f"{exc.message} ({limiter.summary()})"
                    raise

    def add_rate_notice(self) -> str | None:
        """What the server's rate limit on adds did to this run, in one line (None when it never limited)."""
        return self._add_limiter.summary()

    async def _add_once(self, arguments: dict[str, Any], wait_timeout: float | None) -> AddedSource:
        """One `source_add`; with `wait_timeout`, the server waits for processing that long, and its answer is
        waited for that long and a grace more (its own wait ends first, so its answer arrives before we give up)."""
        if wait_timeout is None:
            return await self._typed("source_add", AddedSource, arguments)
        return await self._typed("source_add", AddedSource, {**arguments, "wait_timeout": wait_timeout},
                                 timeout=wait_timeout + QUERY_GRACE_SECONDS)

    async def source_delete(self, source_id: str) -> DeletedSource:
        return await self._typed("source_delete", DeletedSource, {"source_id": source_id, "confirm": True})

    async def source_rename(self, notebook_id: str, source_id: str, new_title: str) -> RenamedSource:
        return await self._typed("source_rename", RenamedSource,
                                 {"notebook_id": notebook_id, "source_id": source_id, "new_title": new_title})

    async def source_get_content(self, source_id: str) -> SourceContent:
        return await self._typed("source_get_content", SourceContent, {"source_id": source_id})

    async def source_describe(self, source_id: str) -> SourceDescription:
        return await self._typed("source_describe", SourceDescription, {"source_id": source_id})

    async def notebook_query(self, notebook_id: str, query: str, source_ids: list[str] | None = None,
                             conversation_id: str | None = None, timeout: float | None = None) -> QueryAnswer:
        """Ask the notebook; `source_ids` None = all sources, `conversation_id` continues a conversation."""
        budget = timeout if timeout is not None else self.settings.query_timeout
        arguments: dict[str, Any] = {"notebook_id": notebook_id, "query": query, "timeout": budget}
        if source_ids is not None:
            arguments["source_ids"] = list(source_ids)
        if conversation_id is not None:
            arguments["conversation_id"] = conversation_id
        return await self._typed("notebook_query", QueryAnswer, arguments, timeout=budget + QUERY_GRACE_SECONDS)


@asynccontextmanager
async def connect(spec: str | MCPServer, settings: Settings | None = None, *, state_dir: Path | None = None,
                  env: Mapping[str, str] | None = None, sleep: Sleep = anyio.sleep,
                  in_process_fake: InProcessFake | None = None) -> AsyncIterator[NotebookLMClient]:
    """A `NotebookLMClient` for `spec` ("fake", a command line, an http://…/mcp URL, or an in-process server).

    Nothing is started until the first call. `state_dir` holds the fake server's state file; `env` adds
    environment variables for a subprocess server; `sleep` is the retry backoff sleep (tests inject one);
    `in_process_fake` builds the fake for `"fake"` (`nlmsync.fake.serve_in_process`).

    Raises:
        UsageError: `spec` cannot be understood.
    """
    target = resolve_server(spec, state_dir=state_dir, env=env, in_process_fake=in_process_fake)
    body_error: Exception | None = None
    async with anyio.create_task_group() as tg:
        client = NotebookLMClient(target, settings or Settings(), tg, sleep=sleep)
        try:
            yield client
        except Exception as exc:  # noqa: BLE001 - re-raised below
            # Re-raised below, outside the task group, so callers see it bare rather than in an ExceptionGroup.
            body_error = exc
        finally:
            await client.aclose()
            tg.cancel_scope.cancel()
            target.close()
    if body_error is not None:
        raise body_error
