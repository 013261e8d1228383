"""The index `serve` builds as it starts: a background thread brings it up to date while the server already
answers, and a search that comes before it is ready waits for it, reporting progress to the client (MCP
progress notifications: notes read so far of the notes to read).

On a fresh vault of thousands of notes the first build takes a minute; inside a tool call that is past many
clients' timeouts, and with no sign of life.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Awaitable, Callable

import anyio.to_thread

from nlmsync.search.index import IndexReport, NoteIndex

__all__ = ["IndexWarmup"]

ProgressReport = Callable[[float, float | None, str | None], Awaitable[None]]
# How often a waiting search tells its client how far the index is.
PROGRESS_EVERY_SECONDS = 0.5


class _Stopped(Exception):
    """Raised from the progress callback to end the build early when the server stops."""


class IndexWarmup:
    """Syncs `index` once in a background thread; `wait` lets a request wait for it with progress."""

    def __init__(self, index: NoteIndex, warn: Callable[[str], None] | None = None) -> None:
        self.index = index
        self.warn = warn
        self.done = 0
        self.total: int | None = None
        self.report: IndexReport | None = None
        self.finished = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the build in a daemon thread."""
        self._thread = threading.Thread(target=self._run, name="nlmsync-index-warmup", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End the build (at its next note; a build already saving finishes) and wait for the thread."""
        self._stopping = True
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        try:
            # stopped, or an error a search meets again (it syncs itself) and reports to its client
            with contextlib.suppress(Exception):
                self.report = self.index.sync(on_progress=self._progress)
            if self.report is not None and self.report.indexed == 0 and self.warn is not None:
                self.warn(f"{self.index.vault_root.resolve()} has no markdown notes: search_notes will find nothing")
        finally:
            self.finished.set()

    def _progress(self, done: int, total: int) -> None:
        if self._stopping:
            raise _Stopped
        self.done, self.total = done, total

    async def wait(self, report: ProgressReport) -> None:
        """Return once the build is over; meanwhile `report(done, total, message)` whenever it moved."""
        if self.finished.is_set():
            return
        shown: tuple[int, int | None] | None = None
        while True:
            now = (self.done, self.total)
            if now != shown:
                shown = now
                what = "scanning the vault" if now[1] is None else f"reading notes {now[0]}/{now[1]}"
                await report(now[0], now[1], f"building the search index: {what}")
            if await anyio.to_thread.run_sync(self.finished.wait, PROGRESS_EVERY_SECONDS):
                break
        total = self.total or 0
        await report(total, total, "search index ready")
