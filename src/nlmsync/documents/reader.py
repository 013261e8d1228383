"""Reading attachments' text, bounded and once per content: `DocumentReader`.

A file is hashed (xxh3-128 of its bytes) and its text looked up in the cache by that hash; only a file whose
bytes were never read is handed to the reading process (`documents.worker`), which is bounded in memory and, here,
in time: past `seconds` it is stopped, and started again for the next file. A file that changed while it was
hashed, one over NotebookLM's size limit, and an image, audio or video file (no text to read) never reach it.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from types import TracebackType

import xxhash

from nlmsync.documents.model import (
    CHANGED_WHILE_READ,
    CRASHED,
    MAX_FILE_BYTES,
    READ_MEMORY_BYTES,
    READ_SECONDS,
    TIMED_OUT,
    TOO_LARGE,
    DocumentText,
    TextCache,
)

READ_BLOCK = 1 << 20
_TEXT_SUFFIXES = frozenset({".pdf", ".docx", ".pptx", ".epub", ".txt", ".csv"})


def hash_file(path: str | os.PathLike[str]) -> tuple[str, os.stat_result, os.stat_result]:
    """xxh3-128 (hex) of the file's bytes, read a block at a time, with its stat before and after reading.

    Raises:
        OSError: the file cannot be opened or read.
    """
    digest = xxhash.xxh3_128()
    with open(path, "rb") as file:
        before = os.fstat(file.fileno())
        while block := file.read(READ_BLOCK):
            digest.update(block)
        after = os.fstat(file.fileno())
    return digest.hexdigest(), before, after


def _same(before: os.stat_result, after: os.stat_result) -> bool:
    return (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size)


class DocumentReader:
    """Reads attachments' text through `cache` (None: no cache), one reading process for many files.

    Use as a context manager, or `close()` it: the reading process ends with it."""

    def __init__(self, cache: TextCache | None = None, *, seconds: float = READ_SECONDS,
                 memory: int = READ_MEMORY_BYTES) -> None:
        self.cache = cache
        self.seconds = seconds
        self.memory = memory
        self.files_read = 0
        """Files handed to the reading process (not found in the cache)."""
        self._process: subprocess.Popen[bytes] | None = None
        self._answers: queue.Queue[bytes] = queue.Queue()

    def __enter__(self) -> DocumentReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def read(self, path: str | os.PathLike[str], vault_path: str | None = None) -> DocumentText:
        """The text of the attachment at `path` (a file system path), from the cache when its bytes were read
        before. With its `vault_path`, a file as it was when last hashed (the same modification time and size)
        is not even hashed again, and what it hashes to now is recorded.

        Raises:
            OSError: the file cannot be opened or read.
        """
        stat = os.stat(path)
        if stat.st_size > MAX_FILE_BYTES:
            return DocumentText("", notice=TOO_LARGE, cacheable=False)
        cache = self.cache
        if cache is not None and vault_path is not None:
            known = cache.hash_of(vault_path, stat.st_mtime_ns, stat.st_size)
            cached = cache.get(known) if known is not None else None
            if cached is not None:
                return cached
        document = self._read(path)
        if cache is not None and vault_path is not None and document.cacheable:
            cache.record(vault_path, stat.st_mtime_ns, stat.st_size, document.content_hash, document.has_text)
        return document

    def _read(self, path: str | os.PathLike[str]) -> DocumentText:
        content_hash, before, after = hash_file(path)
        if not _same(before, after):
            return DocumentText(content_hash, notice=CHANGED_WHILE_READ, cacheable=False)
        suffix = Path(path).suffix.lower()
        if suffix not in _TEXT_SUFFIXES:  # an image, audio or video: found by its name and the notes linking to it
            return DocumentText(content_hash)
        cached = self.cache.get(content_hash) if self.cache is not None else None
        if cached is not None:
            return cached
        document = self._extract(os.fspath(path), suffix, content_hash)
        if self.cache is not None and document.cacheable:
            self.cache.put(document)
        return document

    def _extract(self, path: str, suffix: str, content_hash: str) -> DocumentText:
        self.files_read += 1
        process = self._started()
        assert process.stdin is not None
        request = json.dumps({"path": path, "suffix": suffix, "hash": content_hash}).encode() + b"\n"
        try:
            process.stdin.write(request)
            process.stdin.flush()
            line = self._answers.get(timeout=self.seconds)
        except queue.Empty:
            self._stop()
            return DocumentText(content_hash, notice=TIMED_OUT.format(seconds=self.seconds))
        except OSError:
            line = b""
        if not line:  # the process ended without answering
            return DocumentText(content_hash, notice=CRASHED.format(why=self._ended()))
        reply = json.loads(line)
        return DocumentText(content_hash, reply.get("unit", ""), tuple(reply.get("pages", ())), reply.get("notice"),
                            reply.get("cacheable", True))

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            self._answers = queue.Queue()
            self._process = subprocess.Popen(
                [sys.executable, "-m", "nlmsync.documents.worker", str(self.memory)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            threading.Thread(target=_forward, args=(self._process, self._answers), daemon=True).start()
        return self._process

    def _ended(self) -> str:
        """How the reading process ended (it is forgotten: the next file starts another)."""
        process, self._process = self._process, None
        if process is None:
            return "ended"
        _close_input(process)
        code = process.wait()
        if code < 0:
            try:
                return f"ended by {signal.Signals(-code).name}"
            except ValueError:
                return f"ended by signal {-code}"
        return f"exit status {code}"

    def _stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.kill()
            process.wait()
            _close_input(process)

    def close(self) -> None:
        """End the reading process."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            _close_input(process)
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _close_input(process: subprocess.Popen[bytes]) -> None:
    """Close the reading process's stdin (it ends when it has answered what it was asked)."""
    assert process.stdin is not None
    try:
        process.stdin.close()
    except OSError:
        pass  # it is gone: the pipe it read is broken


def _forward(process: subprocess.Popen[bytes], answers: queue.Queue[bytes]) -> None:
    """Hand each line the reading process writes to `answers`, and b"" when it ends."""
    assert process.stdout is not None
    for line in process.stdout:
        answers.put(line)
    answers.put(b"")
    process.stdout.close()
