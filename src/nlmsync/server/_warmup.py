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

from nlmsync.search import IndexReport, NoteIndex

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
        """Return once the build is over; meanwhile `report(progress, total, message)` whenever it moved.

        Progress counts the notes read, plus one for saving the index, so it only ever increases (as MCP asks
        of progress notifications): `total` is unknown while the vault is walked, then the notes to read + 1.
        """
        if self.finished.is_set():
            return
        shown = -1.0
        while True:
            done, total = self.done, self.total
            if done > shown:
                shown = done
                if total is None:
                    what = "scanning the vault"
                elif done < total:
                    what = f"reading notes {done}/{total}"
                else:
                    what = "saving it"
                await report(done, None if total is None else total + 1, f"building the search index: {what}")
            if await anyio.to_thread.run_sync(self.finished.wait, PROGRESS_EVERY_SECONDS):
                break
        steps = (self.total or 0) + 1
        await report(steps, steps, "search index ready")
