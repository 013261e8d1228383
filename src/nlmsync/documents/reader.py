"""Reading attachments' text, bounded and once per content: `DocumentReader`.

A file is hashed (xxh3-128 of its bytes) and its text looked up in the cache by that hash; only a file whose
bytes were never read is handed to a reading process (`documents.worker`), which is bounded in memory and, here,
in time: past `seconds` on one file it is stopped, and started again for the files after it. A file that changed
while it was hashed, one over NotebookLM's size limit, and an image, audio or video file (no text to read) never
reach one. Files announced ahead (`expect`) are handed over before they are asked for, spread over as many reading
processes as the machine has cores (up to four), so they extract the next files while this one indexes or uploads
the last; each file's text is given back when it is asked for, in the caller's order.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
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
READ_AHEAD = 16
"""Files handed to the reading processes before they are asked for (each answer waits in memory until then)."""
MAX_READING_PROCESSES = 4
_TEXT_SUFFIXES = frozenset({".pdf", ".docx", ".pptx", ".epub", ".txt", ".csv"})


def reading_processes() -> int:
    """How many reading processes a reader may run at once: the cores this process may use, at most four."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux: every core the machine has
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_READING_PROCESSES))


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


@dataclass
class _Request:
    """A file handed to a reading process, not answered yet: where it is, what it hashed to, how it was found
    (`stat`, for the cache's record of its `vault_path`)."""

    path: str
    suffix: str
    content_hash: str
    vault_path: str | None
    stat: os.stat_result


class _Lane:
    """One reading process (started with the first file handed to it, and again after a file stopped it) and the
    files handed to it, in the order it answers them."""

    def __init__(self, memory: int) -> None:
        self.memory = memory
        self.process: subprocess.Popen[bytes] | None = None
        self.answers: queue.Queue[bytes] = queue.Queue()
        self.sent: deque[_Request] = deque()
        self.since = 0.0
        """When the process began the first file of `sent` (the time bound runs from there)."""
        self.starts = 0
        """Processes started for this lane (one more after each file that stopped one)."""

    def holds(self, path: str) -> bool:
        return any(request.path == path for request in self.sent)

    def send(self, request: _Request) -> None:
        process = self._started()
        assert process.stdin is not None
        if not self.sent:
            self.since = time.monotonic()
        self.sent.append(request)
        line = json.dumps({"path": request.path, "suffix": request.suffix, "hash": request.content_hash}).encode()
        try:
            process.stdin.write(line + b"\n")
            process.stdin.flush()
        except OSError:
            pass  # the process is gone: its answers end, and the file is said to have stopped it

    def answer_first(self, seconds: float) -> tuple[_Request, DocumentText, bool]:
        """The first file handed over, its text, and whether the process read it: past the time bound, or when
        the process ended, the text is the notice that says so, and the files after it go to a new process."""
        first = self.sent.popleft()
        try:
            line = self.answers.get(timeout=max(0.0, self.since + seconds - time.monotonic()))
        except queue.Empty:
            self._stop()
            self._again()
            return first, DocumentText(first.content_hash, notice=TIMED_OUT.format(seconds=seconds)), False
        if not line:  # the process ended without answering
            why = self._ended()
            self._again()
            return first, DocumentText(first.content_hash, notice=CRASHED.format(why=why)), False
        self.since = time.monotonic()
        reply = json.loads(line)
        return first, DocumentText(first.content_hash, reply.get("unit", ""), tuple(reply.get("pages", ())),
                                   reply.get("notice"), reply.get("cacheable", True)), True

    def _again(self) -> None:
        """The process stopped on a file: the files after it are handed to a new one."""
        rest = list(self.sent)
        self.sent.clear()
        for request in rest:
            self.send(request)

    def _started(self) -> subprocess.Popen[bytes]:
        if self.process is None or self.process.poll() is not None:
            self.answers = queue.Queue()
            self.starts += 1
            self.process = subprocess.Popen(
                [sys.executable, "-m", "nlmsync.documents.worker", str(self.memory)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            threading.Thread(target=_forward, args=(self.process, self.answers), daemon=True).start()
        return self.process

    def _ended(self) -> str:
        """How the process ended (it is forgotten: the next file starts another)."""
        process, self.process = self.process, None
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
        process, self.process = self.process, None
        if process is not None:
            process.kill()
            process.wait()
            _close_input(process)

    def close(self) -> None:
        """End the process, once it has answered what it was asked."""
        process, self.process = self.process, None
        if process is None:
            return
        try:
            _close_input(process)
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class DocumentReader:
    """Reads attachments' text through `cache` (None: no cache), in up to `processes` reading processes for many
    files (default: `reading_processes()`).

    Use as a context manager, or `close()` it: the reading processes end with it."""

    def __init__(self, cache: TextCache | None = None, *, seconds: float = READ_SECONDS,
                 memory: int = READ_MEMORY_BYTES, ahead: int = READ_AHEAD, processes: int | None = None) -> None:
        self.cache = cache
        self.seconds = seconds
        self.memory = memory
        self.ahead = ahead
        self.processes = processes if processes is not None else reading_processes()
        self.files_read = 0
        """Files handed to a reading process (not found in the cache)."""
        self._lanes: list[_Lane] = []
        """The reading processes, each with the files handed to it (`_send` says when one more is started)."""
        self._expected: deque[tuple[str, str | None]] = deque()
        """Files announced by `expect`, not handed over yet."""
        self._done: dict[str, DocumentText] = {}
        """Files announced and read, not asked for yet."""

    @property
    def processes_started(self) -> int:
        """Reading processes started so far (a file that stops one starts another)."""
        return sum(lane.starts for lane in self._lanes)

    def __enter__(self) -> DocumentReader:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def expect(self, files: Iterable[tuple[str | os.PathLike[str], str | None]]) -> None:
        """Announce files (file system path, vault path) that `read` will be asked for, in that order: some are
        handed to the reading processes ahead, so they read them while the caller works on the ones before."""
        self._expected.extend((os.fspath(path), vault_path) for path, vault_path in files)
        self._fill()

    def read(self, path: str | os.PathLike[str], vault_path: str | None = None) -> DocumentText:
        """The text of the attachment at `path` (a file system path), from the cache when its bytes were read
        before. With its `vault_path`, a file as it was when last hashed (the same modification time and size)
        is not even hashed again, and what it hashes to now is recorded.

        Raises:
            OSError: the file cannot be opened or read.
        """
        path = os.fspath(path)
        self._wait_for(path)
        done = self._done.pop(path, None)
        if done is not None:
            self._fill()
            return done
        if any(p == path for p, _ in self._expected):  # the caller passed over the files announced before it
            while self._expected.popleft()[0] != path:
                pass
        outcome = self._prepare(path, vault_path)
        if isinstance(outcome, DocumentText):
            return outcome
        self._send(outcome)
        self._wait_for(path)
        return self._done.pop(path)

    def _wait_for(self, path: str) -> None:
        """Take the answers of the reading process that holds `path`, up to and including its own."""
        while path not in self._done:
            lane = next((lane for lane in self._lanes if lane.holds(path)), None)
            if lane is None:
                return
            request, document, read = lane.answer_first(self.seconds)
            if read:
                self._finish(request, document)
            self._done[request.path] = document
            self._fill()

    def _prepare(self, path: str, vault_path: str | None) -> DocumentText | _Request:
        """The file's text when it needs no reading process (cached, too large, changed, not a document), or the
        request that asks a reading process for it.

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
        content_hash, before, after = hash_file(path)
        if not _same(before, after):
            return DocumentText(content_hash, notice=CHANGED_WHILE_READ, cacheable=False)
        suffix = Path(path).suffix.lower()
        if suffix not in _TEXT_SUFFIXES:  # an image, audio or video: found by its name and the notes linking to it
            document = DocumentText(content_hash)
        else:
            found = cache.get(content_hash) if cache is not None else None
            if found is None:
                return _Request(path, suffix, content_hash, vault_path, stat)
            document = found
        self._record(vault_path, stat, document)
        return document

    def _record(self, vault_path: str | None, stat: os.stat_result, document: DocumentText) -> None:
        if self.cache is not None and vault_path is not None and document.cacheable:
            self.cache.record(vault_path, stat.st_mtime_ns, stat.st_size, document.content_hash, document.has_text)

    def _fill(self) -> None:
        """Hand announced files to the reading processes until `ahead` wait there (those that need none are
        done)."""
        while self._expected and sum(len(lane.sent) for lane in self._lanes) < self.ahead:
            path, vault_path = self._expected.popleft()
            try:
                outcome = self._prepare(path, vault_path)
            except OSError:
                continue  # `read` meets the error itself, and raises it
            if isinstance(outcome, DocumentText):
                self._done[path] = outcome
            else:
                self._send(outcome)

    def _send(self, request: _Request) -> None:
        """Hand `request` to the reading process with the fewest files waiting. Another is started when each holds
        a file, there is room for it, and at least `ahead` announced files per running process are still to be
        handed over: starting one costs more than reading a few files."""
        self.files_read += 1
        lane = min(self._lanes, key=lambda lane: len(lane.sent), default=None)
        if lane is None or (lane.sent and len(self._lanes) < self.processes
                            and len(self._expected) >= self.ahead * len(self._lanes)):
            lane = _Lane(self.memory)
            self._lanes.append(lane)
        lane.send(request)

    def _finish(self, request: _Request, document: DocumentText) -> None:
        if self.cache is not None and document.cacheable:
            self.cache.put(document)
        self._record(request.vault_path, request.stat, document)

    def close(self) -> None:
        """End the reading processes: each is told at once, then waited for."""
        for lane in self._lanes:
            if lane.process is not None:
                _close_input(lane.process)
        for lane in self._lanes:
            lane.close()


def _close_input(process: subprocess.Popen[bytes]) -> None:
    """Close a reading process's stdin (it ends when it has answered what it was asked)."""
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
