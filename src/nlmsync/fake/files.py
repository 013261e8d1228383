"""File sources as the real server takes them: the folders it may read (`NOTEBOOKLM_ALLOWED_FILE_DIRS`), the
checks before an upload, worded as it words them, the text NotebookLM would read, read the way nlmsync reads it
(`documents.DocumentReader`, one reading process for every file the fake is given: `FileSources`), which files
NotebookLM processes (`processed`), and how long it takes to (`Processing`, `Polls`).

NotebookLM reads a scanned PDF's pages and an image itself; the fake has no such reader, so such a source holds
the text the fake could read of the file: none. A file that could not be read at all (encrypted, damaged, not
UTF-8, over 200 MB, or stopping the reading process) is one NotebookLM fails to process too.

NotebookLM takes minutes to transcribe audio and video; the fake takes `Faults.processing_polls` polls: an add
that waits for such a file polls its status, as the real server does every `POLL_SECONDS`, until it is processed
or the add's `wait_timeout` has passed. The fake waits for nothing real between polls: a poll passes each time the
server answers another call (so the other uploads are seen to go on meanwhile), and at once while no other call
is under way."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.lowlevel

from nlmsync.documents import NO_TEXT_LAYER, DocumentReader, DocumentText
from nlmsync.vault import ATTACHMENT_KINDS, NOTE_SUFFIX

ALLOWED_DIRS_VARIABLE = "NOTEBOOKLM_ALLOWED_FILE_DIRS"
FILE_SUFFIXES = frozenset({NOTE_SUFFIX}).union(*ATTACHMENT_KINDS.values())
"""The 43 extensions the real server uploads."""


def file_outside_allowed_dirs(file_path: str) -> str | None:
    """The real server's refusal of a file outside the folders `NOTEBOOKLM_ALLOWED_FILE_DIRS` names (separated as
    the system separates paths); None when the variable is not set or the file is inside one of them."""
    configured = os.environ.get(ALLOWED_DIRS_VARIABLE, "")
    if not configured:
        return None
    resolved = Path(file_path).expanduser().resolve()
    allowed = [Path(folder).expanduser().resolve() for folder in configured.split(os.pathsep) if folder]
    if any(resolved.is_relative_to(folder) for folder in allowed):
        return None
    return f"File path '{resolved}' is outside allowed directories configured by {ALLOWED_DIRS_VARIABLE}."


def processed(document: DocumentText) -> bool:
    """Whether NotebookLM processes a file whose reading gave `document`: one with text, one read whole (a text
    file, an image, audio or video, read for no text), or one with no text layer (scanned pages)."""
    return document.has_text or document.notice in (None, NO_TEXT_LAYER)


class FileSources:
    """The files a fake server is given, read in one reading process for all of them (started with the first file
    to read, started again after a file that stopped it); `close()` ends it."""

    def __init__(self) -> None:
        self._reader: DocumentReader | None = None
        """Made for the first file to read: a fake given no file never makes one."""

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()

    def read(self, file_path: str) -> tuple[str | None, DocumentText | None]:
        """(why the real server would not upload the file, None) or (None, the text NotebookLM would read of it)."""
        path = Path(file_path).expanduser().resolve()
        if not path.exists():
            return f"File not found: {path}", None
        if not path.is_file():
            return f"Not a regular file: {path}", None
        if path.stat().st_size == 0:
            return f"File is empty: {path}", None
        if path.suffix.lower() not in FILE_SUFFIXES:
            return (f"Unsupported file type: {path.suffix.lower() or '[none]'}\n"
                    f"Supported types: {', '.join(sorted(FILE_SUFFIXES))}"), None
        if path.suffix.lower() == NOTE_SUFFIX:
            return None, DocumentText("", pages=(path.read_text(encoding="utf-8", errors="replace"),))
        if self._reader is None:
            self._reader = DocumentReader()
        return None, self._reader.read(path)


POLL_SECONDS = 3.0
"""How often the real server asks NotebookLM whether a source is processed while an add waits."""


@dataclass
class Processing:
    """A file source an add waits for: its id and file, the title to give it once processed, the add's
    `wait_timeout`, the polls it still needs, the polls made, and the call log's entry of the add."""

    source_id: str
    file_path: str
    title: str | None
    wait_timeout: float
    left: int
    record: int
    polls: int = 0

    def timed_out(self) -> bool:
        """Whether the add's wait has run out (the real server polls every `POLL_SECONDS`)."""
        return self.polls * POLL_SECONDS >= self.wait_timeout


class Polls:
    """What moves the processing on: the calls under way, those of them waiting for a file, and an event set each
    time the server answers a call."""

    def __init__(self) -> None:
        self.under_way = 0
        self.waiting = 0
        self._answered: anyio.Event | None = None

    def answered(self) -> None:
        """A call was answered: the waits poll once more."""
        if self._answered is not None:
            self._answered.set()
            self._answered = None

    async def next(self) -> None:
        """Wait for the next poll: the next answer to another call, or none while no other call is under way."""
        if self.under_way > self.waiting:
            if self._answered is None:
                self._answered = anyio.Event()
            await self._answered.wait()
        else:
            await anyio.lowlevel.checkpoint()
