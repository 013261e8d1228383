"""The fake server's state file: a JSON snapshot plus an append-only journal of changes beside it.

A call that changes the state appends one line to `<state file>.journal` (what it changed: a notebook, a
source, a conversation, the call log entry, the fault counters) instead of rewriting the whole snapshot, so
a call costs the size of its own change whatever the notebook holds. `save()` (when the server stops, before
it drops a connection, when an in-process client closes) journals the calls that changed nothing (reads),
and writes the snapshot atomically and then empties the journal once the journal has grown to a quarter of
the snapshot (or there is none yet): a run that only read costs a line, not the notebook. Loading reads the snapshot and replays the journal; every journal entry puts a value (or deletes
one), so replaying entries the snapshot already holds — a stop between the two steps of `save()` — changes
nothing. A last line cut short by a kill is ignored, and dropped before the next change is appended: its call's
answer never left the server.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

JOURNAL_SUFFIX = ".journal"


def journal_path(state_path: Path) -> Path:
    return state_path.with_name(state_path.name + JOURNAL_SUFFIX)


def write_snapshot(state_path: Path, data: dict[str, Any]) -> None:
    """Write the snapshot atomically (temporary file + rename)."""
    state_path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".fake-state-", dir=state_path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False)
        os.replace(tmp, state_path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Journal:
    """The append-only journal of one state file."""

    def __init__(self, state_path: Path) -> None:
        self.path = journal_path(state_path)
        self._whole = False
        """Whether the journal is known to end with a whole line (after this server's first append)."""

    def append(self, entries: list[dict[str, Any]]) -> None:
        """Append the changes of one call as one line, handed to the OS at once (it survives a kill -9). The
        first append drops a last line cut short (`entries` skips it): written after it, the line would join it
        and be lost with it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not self._whole:
            self._drop_cut_line()
            self._whole = True
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entries, ensure_ascii=False) + "\n")

    def _drop_cut_line(self) -> None:
        try:
            with self.path.open("r+b") as handle:
                end = handle.seek(0, os.SEEK_END)
                if end == 0:
                    return
                handle.seek(end - 1)
                if handle.read(1) == b"\n":
                    return
                handle.seek(0)
                handle.truncate(handle.read().rfind(b"\n") + 1)
        except FileNotFoundError:
            return

    def size(self) -> int:
        """The journal's size in bytes (0 when there is none)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def clear(self) -> None:
        """Empty the journal (its changes are in the snapshot now)."""
        if self.path.exists():
            self.path.open("w").close()

    def entries(self) -> Iterator[dict[str, Any]]:
        """Every change recorded, in order; a last line cut short (no newline ends it) is skipped.

        Raises:
            ValueError, TypeError: a whole line is not a list of changes (the message says which).
        """
        try:
            text = self.path.read_text(encoding="utf-8", errors="surrogateescape")
        except FileNotFoundError:
            return
        for number, line in enumerate(text.split("\n")[:-1], start=1):
            try:
                entries = json.loads(line)
            except json.JSONDecodeError:
                raise ValueError(f"{self.path.name} line {number} is not JSON") from None
            if not isinstance(entries, list):
                raise TypeError(f"{self.path.name} line {number} is not a list of changes")
            yield from entries
