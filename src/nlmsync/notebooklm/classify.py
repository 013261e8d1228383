"""Turn what the NotebookLM MCP server or the transport said into one `NotebookLMError` subclass.

Pure functions, no I/O. A message leads with what nlmsync was doing, in the user's words (`doing`: "uploading a
note", not `source_add`); the tool stays in the error's `tool`.

- `classify_in_band_error(tool, payload)` — a `{"status": "error", "error": ..., "error_details"?: ...}`
  result: by the `category` of its `error_details` when present, else by the message text. The raw message is kept.
- `classify_tool_error_text(tool, text)` — an MCP-level tool error (`is_error` result), classified by text.
- `classify_exception(exc, tool, phase)` — anything raised while connecting or calling: exception groups
  are unwrapped first; a missing server command is `ServerCommandNotFoundError` (never retried).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Any, Literal

import anyio
import httpx2
import pydantic
import regex
from mcp import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionLostError,
    FileOutsideServerFoldersError,
    GoogleUnreachableError,
    MalformedResponseError,
    NotebookLMError,
    NotFoundError,
    RateLimitedError,
    ServerCapacityError,
    ServerCommandNotFoundError,
    ServerError,
    ServerTimeoutError,
    ServerUnreachableError,
    ServerValidationError,
    leaf_exceptions,
)
from nlmsync.notebooklm.transports import login_command

__all__ = ["classify_exception", "classify_in_band_error", "classify_tool_error_text", "doing", "is_unknown_tool",
           "leaf_exceptions"]

Phase = Literal["connect", "call"]

_CATEGORY_CLASSES: dict[str, type[NotebookLMError]] = {
    "auth": AuthenticationRequiredError,
    "authentication": AuthenticationRequiredError,
    "unauthenticated": AuthenticationRequiredError,
    "not_found": NotFoundError,
    "resource_exhausted": RateLimitedError,
    "quota": RateLimitedError,
    "rate_limited": RateLimitedError,
    "invalid_argument": ServerValidationError,
    "validation": ServerValidationError,
    "capacity": ServerCapacityError,
    # The real server's own query budget ran out (`notebook_query(timeout=…)`): the same event as our client
    # giving up on a slow call, so the same class (exit 4), whichever clock expires first.
    "deadline_exceeded": ServerTimeoutError,
}

# Checked in this order: the first pattern that matches the message decides the class.
_MESSAGE_RULES: list[tuple[regex.Pattern[str], type[NotebookLMError]]] = [
    # The server's own requests to Google failing for want of a network: the resolver's and the socket's words
    # on Linux, macOS and Windows ("[Errno -2] Name or service not known"), and the real server's own.
    (regex.compile(r"name or service not known|temporary failure in name resolution|no address associated with "
                   r"hostname|nodename nor servname|getaddrinfo failed|network is unreachable|no route to host|"
                   r"could not reach (notebooklm|google)|failed to establish a new connection", regex.I),
     GoogleUnreachableError),
    (regex.compile(r"outside allowed directories|NOTEBOOKLM_ALLOWED_FILE_DIRS"), FileOutsideServerFoldersError),
    (regex.compile(r"no authentication found|nlm login|not authenticated|authenticat|cookie|credentials? (have|has) "
                   r"expired|login required|sign[- ]?in required|\(code 16\)", regex.I), AuthenticationRequiredError),
    # The real server words RPC failures "API error (code N): NAME" (gRPC codes: 3 invalid argument,
    # 4 deadline exceeded, 5 not found, 8 resource exhausted, 16 unauthenticated).
    (regex.compile(r"resource_exhausted|rate[- ]?limit|quota|too many requests|error code 8\b|\(code 8\)|"
                   r"usage limit", regex.I), RateLimitedError),
    (regex.compile(r"deadline[ _](exceeded|expired)|\(code 4\)|timed out|did not respond within", regex.I),
     ServerTimeoutError),
    (regex.compile(r"source limit|sources? per notebook|maximum (number of )?sources|notebook is full|capacity|"
                   r"too many sources", regex.I), ServerCapacityError),
    (regex.compile(r"\bnot[ _]found\b|\(code 5\)|does not exist|no such", regex.I), NotFoundError),
    (regex.compile(r"validation error|invalid|is required|must be|not confirmed|unexpected keyword|"
                   r"missing required", regex.I), ServerValidationError),
]

# What nlmsync is doing when it calls each tool, as an error's first words.
_DOING = {
    "server_info": "asking the server about its login",
    "refresh_auth": "renewing the Google login",
    "usage_get": "reading the plan's usage allowance",
    "notebook_list": "listing the notebooks",
    "notebook_get": "reading the notebook",
    "notebook_create": "creating the notebook",
    "notebook_delete": "deleting the notebook",
    "notebook_query": "asking the notebook",
    "source_add": "uploading to the notebook",
    "source_delete": "deleting a source from the notebook",
    "source_rename": "renaming a source",
    "source_get_content": "reading a source back",
    "source_describe": "reading a source's summary",
}


def doing(tool: str) -> str:
    """What nlmsync was doing when it called `tool`, in the user's words (an unknown tool: its name)."""
    return _DOING.get(tool, tool)


# The commands of the real server's package (PyPI notebooklm-mcp-cli).
REAL_SERVER_COMMANDS = frozenset({"notebooklm-mcp", "nlm"})
_NETWORK_HINT = ("the server runs, but its requests to Google fail: check this machine's network (connection, DNS, "
                 "proxy), then run again")
_UNKNOWN_TOOL = regex.compile(r"unknown tool", regex.I)
_REFUSED_FILE = regex.compile(r"File path '([^']*)' is outside allowed directories")
_QUERY_TIMEOUT_HINT = "give the query more time: query_timeout in .nlmsync/config.toml or NLMSYNC_QUERY_TIMEOUT"


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return text.strip()


def _class_for_message(message: str) -> type[NotebookLMError]:
    for pattern, cls in _MESSAGE_RULES:
        if pattern.search(message):
            return cls
    return ServerError


def _build(cls: type[NotebookLMError], tool: str, raw: str, details: dict[str, Any],
           hint: str | None) -> NotebookLMError:
    if cls is AuthenticationRequiredError:
        said = _first_line(raw).split(". ")[0].rstrip(".")
        message = f"{doing(tool)}: the NotebookLM server needs a Google login ({said})"
        login = login_command()
        # the server's own hint says `nlm login`, which a shell does not find when nlm is not on PATH
        if not hint or login != "'nlm login'":
            hint = f"run {login} (or give the server NOTEBOOKLM_COOKIES), then try again"
    elif cls is GoogleUnreachableError:
        message = f"{doing(tool)}: the NotebookLM server could not reach Google ({_first_line(raw)})"
        hint = _NETWORK_HINT
    elif cls is FileOutsideServerFoldersError:
        found = _REFUSED_FILE.search(raw)
        where = f" ({found.group(1)} is not in them)" if found else ""
        message = (f"{tool}: the NotebookLM server may read files only in the folders its "
                   f"NOTEBOOKLM_ALLOWED_FILE_DIRS setting names{where}")
        hint = ("add the vault's folder to NOTEBOOKLM_ALLOWED_FILE_DIRS where the server is started (folders "
                f"separated by '{os.pathsep}'), or leave it unset")
    elif cls is ServerTimeoutError and tool == "notebook_query":
        # The server's own hint ("retry with a longer timeout") names no setting the user can change here.
        message = _led_by_doing(tool, _first_line(raw))
        hint = _QUERY_TIMEOUT_HINT
    else:
        message = _led_by_doing(tool, _first_line(raw))
    return cls(message, tool=tool, raw=raw, details=details, hint=hint)


def _led_by_doing(tool: str, said: str) -> str:
    """The server's words `said`, led by what nlmsync was doing; the tool's name they start with is put in those
    words ("source_add failed: …" is "uploading to the notebook failed: …")."""
    if said.startswith((f"{tool} ", f"{tool}:")):
        return doing(tool) + said[len(tool):]
    return f"{doing(tool)}: {said}"


def classify_in_band_error(tool: str, payload: dict[str, Any]) -> NotebookLMError:
    """The exception for an in-band error result (`status == "error"`)."""
    error = payload.get("error")
    raw = error if isinstance(error, str) and error.strip() else "the server reported an error without a message"
    raw_details = payload.get("error_details")
    details: dict[str, Any] = dict(raw_details) if isinstance(raw_details, dict) else {}
    hint = payload.get("hint") if isinstance(payload.get("hint"), str) else None
    category = details.get("category")
    cls = _CATEGORY_CLASSES.get(category.lower()) if isinstance(category, str) else None
    if cls is None:
        cls = _class_for_message(raw)
    return _build(cls, tool, raw, details, hint)


def is_unknown_tool(exc: NotebookLMError) -> bool:
    """Whether the server refused a call because it has no such tool (an older or another server)."""
    return bool(_UNKNOWN_TOOL.search(exc.raw))


def classify_tool_error_text(tool: str, text: str) -> NotebookLMError:
    """The exception for an MCP tool error result (`is_error`), e.g. the server rejecting our arguments."""
    raw = text.strip() or "the server reported a tool error without a message"
    return _build(_class_for_message(raw), tool, raw, {}, None)


_LEAF_PREFERENCE: tuple[type[BaseException], ...] = (
    NotebookLMError, FileNotFoundError, PermissionError, MCPError, TimeoutError, httpx2.HTTPError,
    pydantic.ValidationError,
)
_CONNECTION_LIKE: tuple[type[BaseException], ...] = (
    MCPError, OSError, EOFError, httpx2.HTTPError, anyio.ClosedResourceError, anyio.BrokenResourceError,
    anyio.EndOfStream,
)


def _pick_leaf(exc: BaseException) -> BaseException:
    """The most telling exception inside a (possibly nested) exception group."""
    leaves = list(leaf_exceptions(exc)) or [exc]
    for wanted in _LEAF_PREFERENCE:
        for leaf in leaves:
            if isinstance(leaf, wanted):
                return leaf
    return leaves[0]


def _missing_command_hint(command: str) -> str:
    if PurePath(command).name in REAL_SERVER_COMMANDS:
        return ("the real NotebookLM server is not installed here: pip install notebooklm-mcp-cli (or uv tool "
                "install notebooklm-mcp-cli), then nlm login; or try nlmsync offline with --server fake")
    if os.sep not in command:
        return "check --server (or NLMSYNC_SERVER); is the server installed?"
    cut = _cut_at_a_space(command)
    if cut is not None:  # `--server "/My Tools/server …"`: the command line was split at the path's space
        return (f"the path looks cut at a space ('{cut}' exists): quote it inside --server, as in "
                f"--server \"'{cut}{os.sep}…' --transport stdio\"")
    return ("check --server (or NLMSYNC_SERVER): is the server installed at that path? A path with spaces is "
            "quoted inside it: --server \"'/My Tools/server' --transport stdio\"")


def _cut_at_a_space(command: str) -> str | None:
    """The file or folder whose name starts with `command`'s last part and a space, beside it: what a path with
    a space was before `--server`'s command line was split into words there."""
    path = Path(command)
    try:
        names = sorted(entry.name for entry in os.scandir(path.parent) if entry.name.startswith(path.name + " "))
    except OSError:
        return None
    return str(path.parent / names[0]) if names else None


def classify_exception(exc: BaseException, *, tool: str, phase: Phase, server: str = "the server") -> NotebookLMError:
    """The `NotebookLMError` for an exception raised while connecting (`phase="connect"`) or calling a tool.

    Connection trouble while connecting is `ServerUnreachableError`, during a call `ConnectionLostError`;
    a timeout is `ServerTimeoutError`; a missing command `ServerCommandNotFoundError`.
    """
    leaf = _pick_leaf(exc)
    if isinstance(leaf, NotebookLMError):
        return leaf
    if isinstance(leaf, FileNotFoundError | PermissionError):
        name = leaf.filename or server
        what = "not found" if isinstance(leaf, FileNotFoundError) else "not executable"
        return ServerCommandNotFoundError(f"MCP server command {what}: {name}", tool=tool, raw=str(leaf),
                                          hint=_missing_command_hint(str(name)))
    if isinstance(leaf, TimeoutError | httpx2.TimeoutException) or (
            isinstance(leaf, MCPError) and leaf.code == REQUEST_TIMEOUT):
        return ServerTimeoutError(f"{doing(tool)}: {server} did not answer in time", tool=tool, raw=str(leaf))
    if isinstance(leaf, MCPError) and leaf.code != CONNECTION_CLOSED:
        return _build(_class_for_message(leaf.message), tool, leaf.message, {"mcp_code": leaf.code}, None)
    if isinstance(leaf, pydantic.ValidationError):
        return MalformedResponseError(f"{doing(tool)}: malformed message from {server}: {leaf.errors()[0].get('msg')}",
                                      tool=tool, raw=str(leaf))
    detail = str(leaf) or type(leaf).__name__
    if phase == "call" and not isinstance(leaf, _CONNECTION_LIKE):
        return ServerError(f"{doing(tool)}: unexpected {type(leaf).__name__} talking to {server}: {detail}", tool=tool,
                           raw=detail)
    if phase == "connect":
        return ServerUnreachableError(f"cannot connect to {server}: {detail}", tool=tool, raw=detail,
                                      hint="check --server (or NLMSYNC_SERVER), and that the server is running")
    return ConnectionLostError(f"{doing(tool)}: connection to {server} lost: {detail}", tool=tool, raw=detail)
