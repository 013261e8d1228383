"""Where a run reports its progress: the `ProgressSink` protocol the orchestrator calls (the CLI's rich display
is one; `--json` and quiet runs pass none)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from nlmsync.sync import NoteOutcome, PackOutcome


class ProgressSink(Protocol):
    """Where a run reports progress (the CLI's rich display; nothing for `--json`)."""

    def start(self, label: str, total: int) -> None: ...

    def advance(self, outcome: NoteOutcome | PackOutcome) -> None: ...

    def indexing(self, done: int, total: int) -> None:
        """The search index is being brought up to date: `done` of `total` changed notes read."""

    def reading(self, done: int, total: int) -> None:
        """The run is reading its notes: `done` of `total` read, or found unchanged by their size and time."""
