"""Who may write the state file: the cross-process writer lock, and naming whoever holds a lock.

The writer lock is `fcntl.flock` on `<state file>.lock`, which holds the owner's pid and command line.
One nlmsync run writes to a vault's state at a time; readers (search, status) never take this lock
(SQLite's WAL lets them read while a writer works). The lock is re-entrant within one store.

Both ways of being kept out are "busy" (`StateLockedError`, exit 7): another nlmsync holding the writer
lock, and another process keeping SQLite's own lock on the file longer than the busy timeout. SQLite's
lock records no owner; on Linux `/proc/locks` still names the process holding a write lock on the file.
"""

from __future__ import annotations

import fcntl
import os
import shlex
import sys
import threading
import time
from pathlib import Path

from nlmsync.errors import StateLockedError

POLL_SECONDS = 0.05
MAX_COMMAND_CHARS = 120
BUSY_HINT = "safe to run again once it has finished"


class WriterLock:
    """`acquire(timeout)` / `release()`; a `lock_path` of None (an in-memory store) locks in-process only."""

    def __init__(self, lock_path: Path | None) -> None:
        self.lock_path = lock_path
        self._fd: int | None = None
        self._depth = 0
        self._thread_lock = threading.RLock()

    def acquire(self, timeout: float) -> None:
        """Take the lock, waiting at most `timeout` seconds.

        Raises:
            StateLockedError: another process holds it ("another nlmsync is running on this vault (pid N)").
        """
        if not self._thread_lock.acquire(timeout=max(timeout, 0.0)):
            raise StateLockedError("another nlmsync is running on this vault (in this process)")
        if self._depth > 0 or self.lock_path is None:
            self._depth += 1
            return
        try:
            self._fd = self._lock_file(timeout)
        except BaseException:
            self._thread_lock.release()
            raise
        self._depth = 1

    def _lock_file(self, timeout: float) -> int:
        assert self.lock_path is not None
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    pid, command = _read_owner(fd)
                    os.close(fd)
                    who = f" (pid {pid}: {command})" if pid is not None and command else (
                        f" (pid {pid})" if pid is not None else "")
                    raise StateLockedError(f"another nlmsync is running on this vault{who}", pid=pid,
                                           hint=f"{BUSY_HINT}; the lock is {self.lock_path}") from None
                time.sleep(POLL_SECONDS)
        try:  # who holds the lock, for the message another run gives: worth no failure on a full disk
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{_own_command()}\n".encode("utf-8", "replace"), 0)
        except OSError:
            pass
        return fd

    def release(self) -> None:
        if self._depth == 0:
            return
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None
        self._thread_lock.release()

    @property
    def held(self) -> bool:
        return self._depth > 0


def _printable(text: str) -> str:
    shown = "".join(c if c.isprintable() else "?" for c in text)
    return shown if len(shown) <= MAX_COMMAND_CHARS else shown[:MAX_COMMAND_CHARS - 1] + "…"


def _own_command() -> str:
    """This process's command line as the lock records it (`nlmsync refresh --all`), on one line, quoted as a
    shell reads it (`nlmsync --server 'fake --latency 2' refresh`), so the busy error can be copied."""
    args = list(sys.argv) or ["nlmsync"]
    name = os.path.basename(args[0])
    return _printable(shlex.join(["nlmsync" if name == "__main__.py" else name, *args[1:]]))


def _read_owner(fd: int) -> tuple[int | None, str]:
    """The pid and command line recorded in a lock file (the command is empty for an older nlmsync's lock)."""
    try:
        lines = os.pread(fd, 4096, 0).decode("utf-8", "replace").splitlines()
    except OSError:
        return None, ""
    pid = lines[0].strip() if lines else ""
    return (int(pid) if pid.isdigit() else None), (lines[1].strip() if len(lines) > 1 else "")


def _command_of(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return _printable(shlex.join(part.decode("utf-8", "replace") for part in raw.split(b"\0") if part))


def sqlite_lock_holder(db_path: Path) -> str | None:
    """"pid N: command" of another process holding a write lock on the state file (or its WAL index), as
    Linux's `/proc/locks` shows it; None when it cannot be told (another system, or the lock is gone)."""
    inodes: set[int] = set()
    for path in (db_path, Path(f"{db_path}-shm"), Path(f"{db_path}-wal")):
        try:
            inodes.add(path.stat().st_ino)
        except OSError:
            continue
    try:
        lines = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        # "1: POSIX  ADVISORY  WRITE 1234 08:01:5678 120 120"; "->" marks a process waiting for a lock
        if len(fields) < 6 or fields[1] == "->" or fields[3] != "WRITE" or not fields[4].isdigit():
            continue
        pid, inode = int(fields[4]), fields[5].rsplit(":", 1)[-1]
        if pid != os.getpid() and inode.isdigit() and int(inode) in inodes:
            command = _command_of(pid)
            return f"pid {pid}: {command}" if command else f"pid {pid}"
    return None


def state_file_busy(db_path: Path | None, detail: str, waited: float) -> StateLockedError:
    """The busy error for a state file another process kept locked for longer than `waited` seconds."""
    name = str(db_path) if db_path else "in-memory state"
    holder = sqlite_lock_holder(db_path) if db_path else None
    who = f"another process ({holder})" if holder else "another process"
    return StateLockedError(f"{name}: state file is locked by {who}; gave up after {waited:g} s ({detail})",
                            hint=BUSY_HINT)
