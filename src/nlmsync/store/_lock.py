"""The cross-process writer lock: `fcntl.flock` on `<state file>.lock`, which holds the owner's pid.

One nlmsync run writes to a vault's state at a time; readers (search, status) never take this lock
(SQLite's WAL lets them read while a writer works). The lock is re-entrant within one store.
"""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

from nlmsync.errors import StateLockedError

POLL_SECONDS = 0.05


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
                    pid = _read_pid(fd)
                    os.close(fd)
                    who = f" (pid {pid})" if pid is not None else ""
                    raise StateLockedError(f"another nlmsync is running on this vault{who}", pid=pid,
                                           hint=f"wait for it to finish; the lock is {self.lock_path}") from None
                time.sleep(POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
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


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(raw) if raw.isdigit() else None
