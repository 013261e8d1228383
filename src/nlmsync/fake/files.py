"""File sources as the real server takes them: the folders it may read (`NOTEBOOKLM_ALLOWED_FILE_DIRS`), the
checks before an upload, worded as it words them, the text NotebookLM would read, read the way nlmsync reads it
(`documents.DocumentReader`, one reading process for every file the fake is given: `FileSources`), and which files
NotebookLM processes (`processed`).

NotebookLM reads a scanned PDF's pages and an image itself; the fake has no such reader, so such a source holds
the text the fake could read of the file: none. A file that could not be read at all (encrypted, damaged, not
UTF-8, over 200 MB, or stopping the reading process) is one NotebookLM fails to process too."""

from __future__ import annotations

import os
from pathlib import Path

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
