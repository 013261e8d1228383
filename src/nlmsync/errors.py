"""Every error nlmsync raises on purpose, and the exit code each one maps to.

The tree (exit code in brackets)::

    NlmsyncError [1]                      anything nlmsync knows how to explain
    ├── UsageError [2]                    bad command-line usage
    │   └── NoNotebookError [2]           no notebook given, and the state file knows none to use
    ├── ConfigError [2]                   unknown or invalid setting (names the key and where it came from)
    ├── InputError [2]                    bad input: a vault, a note, a path, a queries file
    │   ├── PathOutsideVaultError [2]     a path that escapes the vault or names an excluded note
    │   ├── UnreadableNoteError [2]       a note that is binary, not UTF-8 or cannot be read (`reason`)
    │   └── NotebookNotFoundError [2]     the notebook given (or recorded) is not on the server
    ├── StateError [2]                    the state file cannot be used as it is
    │   ├── StateCorruptError [2]         not an SQLite file, or damaged
    │   └── StateTooNewError [2]          written by a newer nlmsync; never modified
    ├── StateLockedError [7]              busy: another nlmsync holds this vault's writer lock, or another
    │                                     process kept the state file locked past the wait (safe to run again)
    ├── DiskFullError [7]                 no space left where nlmsync writes (the disk, or the user's quota):
    │                                     nothing was half-written, safe to run again once there is room
    ├── CapacityError [3]                 notebook full: no managed source may be evicted, or the server
    │                                     refused an add as full (its real limit, learned for later runs)
    ├── PartialFailure [6]                some notes failed, the rest were done and recorded
    ├── AllowanceSpentError [8]           the plan's usage allowance has nothing left: the question was not sent
    └── NotebookLMError [1]               the NotebookLM MCP server failed a call
        ├── ConnectionProblem [4]         transient transport trouble (the only thing ever retried)
        │   ├── ServerUnreachableError [4]  could not connect at all
        │   │   └── GoogleUnreachableError [4]  the server answers, but cannot reach Google (no network)
        │   ├── ConnectionLostError [4]     the session died during a call
        │   └── ServerTimeoutError [4]      the call did not answer in time
        ├── ServerCommandNotFoundError [4]  the server command does not exist (never retried)
        ├── AuthenticationRequiredError [5] the server needs a Google login
        ├── NotFoundError [1]             notebook or source not found
        ├── RateLimitedError [1]          RESOURCE_EXHAUSTED / quota
        ├── ServerValidationError [2]     the server rejected our arguments
        │   └── FileOutsideServerFoldersError [2]  the server may read files only in the folders
        │                                     NOTEBOOKLM_ALLOWED_FILE_DIRS names, and an attachment is elsewhere
        ├── ServerCapacityError [3]       the server refused an add because the notebook is full
        ├── ServerError [1]               any other in-band error
        └── MalformedResponseError [1]    a result missing a field or of the wrong type

`exit_code_for` is the one place that maps an exception to a process exit code.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_CAPACITY = 3
EXIT_CONNECTION = 4
EXIT_AUTH = 5
EXIT_PARTIAL = 6
EXIT_BUSY = 7
EXIT_ALLOWANCE = 8


class RunReport(Protocol):
    """What a run had done and recorded when an error stopped it. It is always a `sync.RefreshReport`: that
    model sits layers above these errors, so the type here is the part of it every layer may rely on, and
    the command line and the MCP server narrow to the model to print or return it."""

    notebook_id: str

    def counts(self) -> dict[str, int]: ...


class NlmsyncError(Exception):
    """Base of every error nlmsync raises deliberately; `str(err)` is a one-line message for the user."""

    exit_code: int = EXIT_UNEXPECTED
    # What a run had done and recorded before this error stopped it (a refresh's per-note report), if anything.
    report: RunReport | None = None

    def __init__(self, message: str, *, hint: str | None = None, client_hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.client_hint = client_hint
        """The hint as an MCP client of `nlmsync serve` can act on it (it passes no command-line option), where
        the command line's would mislead it; None: `hint` serves both."""

    def __str__(self) -> str:
        return self.message


class UsageError(NlmsyncError):
    exit_code = EXIT_USAGE


class NoNotebookError(UsageError):
    """No `--notebook` (nor `notebook` setting), and no notebook recorded in the state file to use instead. The
    message names the vault whose state file was read; the hints say what the server has to choose from."""


class ConfigError(NlmsyncError):
    """An unknown or invalid setting; the message names the key and its source."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, *, key: str | None = None, source: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.key = key
        self.source = source


class InputError(NlmsyncError):
    exit_code = EXIT_USAGE


class PathOutsideVaultError(InputError):
    pass


class UnreadableNoteError(InputError):
    """A note that is binary, not valid UTF-8 or cannot be read; `reason` says which in the index's words
    (`binary`, `invalid utf-8 (byte 5)`, `unreadable (Permission denied)`)."""

    def __init__(self, path: str, reason: str = "unreadable") -> None:
        super().__init__(f"{path}: cannot read note: {reason}")
        self.reason = reason


class NotebookNotFoundError(InputError):
    """The notebook id of the run (from --notebook, the config or the state file) is not on the server."""


class StateError(NlmsyncError):
    exit_code = EXIT_USAGE


class StateCorruptError(StateError):
    pass


class StateTooNewError(StateError):
    pass


class StateLockedError(NlmsyncError):
    """Busy: the message says who holds the lock when that is known (pid and command of another nlmsync)."""

    exit_code = EXIT_BUSY

    def __init__(self, message: str, *, pid: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.pid = pid


class DiskFullError(NlmsyncError):
    """No space left on the device (or in the quota) where nlmsync writes. Every write is a step that either
    happened whole or not at all, so nothing needs moving aside or rebuilding: run again once there is room."""

    exit_code = EXIT_BUSY

    def __init__(self, where: str | Path) -> None:
        super().__init__(f"{where}: no space left on the device; nothing was half-written",
                         hint="free some space (or raise the quota) and run the command again")
        self.where = str(where)


_SQLITE_FULL = 13
_SQLITE_IOERR = 10
_SQLITE_IOERR_SHMSIZE = 19 << 8 | _SQLITE_IOERR  # growing the WAL index (`-shm`) failed: no room for it


def is_disk_full(exc: BaseException, where: str | Path | None = None) -> bool:
    """Whether `exc` says there is no room to write: ENOSPC or EDQUOT, SQLite's SQLITE_FULL or its failure to
    grow the WAL index, or any other SQLite I/O error while the file system holding `where` has no free block."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    code = getattr(exc, "sqlite_errorcode", None)
    if not isinstance(code, int):
        return False
    if code & 0xFF == _SQLITE_FULL or code == _SQLITE_IOERR_SHMSIZE:
        return True
    if code & 0xFF != _SQLITE_IOERR or where is None:
        return False
    try:
        return os.statvfs(Path(where).parent).f_bavail == 0
    except OSError:
        return False


class CapacityError(NlmsyncError):
    exit_code = EXIT_CAPACITY


class PartialFailure(NlmsyncError):
    """Some notes failed; `report` carries the per-note outcome that was still recorded."""

    exit_code = EXIT_PARTIAL

    def __init__(self, message: str, *, report: RunReport | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.report = report


class AllowanceSpentError(NlmsyncError):
    """A window of the plan's usage allowance (`window`: rolling or weekly) has nothing left, so a question was
    not sent; `resets_at` is when it comes back (None when the server did not say)."""

    exit_code = EXIT_ALLOWANCE

    def __init__(self, message: str, *, window: str = "", resets_at: datetime | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.window = window
        self.resets_at = resets_at


class NotebookLMError(NlmsyncError):
    """A failed call to the NotebookLM MCP server; `raw` keeps the server's own message."""

    exit_code = EXIT_UNEXPECTED

    def __init__(self, message: str, *, tool: str | None = None, raw: str | None = None,
                 details: dict[str, Any] | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.tool = tool
        self.raw = raw if raw is not None else message
        self.details = details or {}


class ConnectionProblem(NotebookLMError):
    exit_code = EXIT_CONNECTION


class ServerUnreachableError(ConnectionProblem):
    pass


class GoogleUnreachableError(ServerUnreachableError):
    """The server answered, but its own requests to Google failed: no network, no name resolution."""


class ConnectionLostError(ConnectionProblem):
    pass


class ServerTimeoutError(ConnectionProblem):
    pass


class ServerCommandNotFoundError(NotebookLMError):
    exit_code = EXIT_CONNECTION


class AuthenticationRequiredError(NotebookLMError):
    exit_code = EXIT_AUTH


class NotFoundError(NotebookLMError):
    pass


class RateLimitedError(NotebookLMError):
    pass


class ServerValidationError(NotebookLMError):
    exit_code = EXIT_USAGE


class FileOutsideServerFoldersError(ServerValidationError):
    """The server refused a file upload: it may read only the folders its NOTEBOOKLM_ALLOWED_FILE_DIRS names."""


class ServerCapacityError(NotebookLMError):
    exit_code = EXIT_CAPACITY


class ServerError(NotebookLMError):
    pass


class MalformedResponseError(NotebookLMError):
    pass


def leaf_exceptions(exc: BaseException) -> Iterator[BaseException]:
    """Every non-group exception inside `exc` (depth first); `exc` itself when it is not a group."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from leaf_exceptions(inner)
    else:
        yield exc


def exit_code_for(exc: BaseException) -> int:
    """The process exit code for an exception: its class's code, or 1 for anything unforeseen."""
    if isinstance(exc, NlmsyncError):
        return exc.exit_code
    return EXIT_UNEXPECTED
