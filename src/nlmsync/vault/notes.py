"""Reading a note: its bytes (`read_file_bytes`), its bytes to text (`decode_note`, the one rule for what is not
a readable note), reading it from the vault (`read_note_text` refuses binary files and invalid UTF-8 with an
`InputError` naming the note). Beside them, the bounded read of a file the user names as input
(`read_input_file`: a config file, a queries file).
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
from pathlib import Path

from nlmsync.errors import InputError, UnreadableNoteError
from nlmsync.vault.paths import resolve_in_vault

_BINARY_SNIFF_BYTES = 8192


def read_file_bytes(path: str | Path, size: int = 0) -> bytes:
    """All the bytes of the file at `path`; `size` is what a stat just gave (the first read asks for one byte
    more, and a file that grew since is read on to its end).

    Plain `os.open` and `os.read`: `open(path, "rb").read()` makes a file object and a buffer, stats the file
    again and reads until an empty read, which costs as much again as the reading on the short notes of a full
    build (38,404 files: 0.18 s against 0.37 s of CPU).

    Raises:
        OSError: the file cannot be opened or read (a folder: `IsADirectoryError`).
    """
    fd = os.open(path, os.O_RDONLY)
    try:
        chunk = os.read(fd, size + 1)
        if len(chunk) <= size:  # a read shorter than asked ends a regular file: no second call to tell it
            return chunk
        chunks = [chunk]
        while chunk:  # it grew: to the end, which an empty read tells
            chunk = os.read(fd, max(size, 1 << 16))
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_input_file(path: str | Path, limit: int) -> bytes:
    """All the bytes of a file the user names as input, which must be a regular file of at most `limit` bytes:
    a device (`/dev/zero`), a FIFO, a socket or a file that keeps growing is refused before it costs memory or
    waits. The file is looked at before it is opened, opened without waiting (a FIFO put in its place meanwhile
    has no writer to wait for), looked at again, and read to at most `limit` bytes and one more.

    Raises:
        FileNotFoundError: there is no such file.
        IsADirectoryError: it is a folder.
        OSError: it cannot be opened or read, is not a regular file, or holds more than `limit` bytes (the
            `strerror` says which, in words for a one-line message).
    """
    _check_input(os.stat(path).st_mode, 0, limit)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        _check_input(st.st_mode, st.st_size, limit)
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    _check_input(stat.S_IFREG, len(data), limit)
    return data


def _check_input(mode: int, size: int, limit: int) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, "not a regular file")
    if size > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")


def decode_note(data: bytes) -> tuple[str, str | None]:
    """The text of a note's bytes (a UTF-8 BOM dropped) and why they are not a readable note — `binary`,
    `invalid utf-8 …` (the text is then empty) or `empty` (see `is_blank`) — or None. Decodes once and
    copies nothing else, however large the note."""
    if data.find(b"\x00", 0, _BINARY_SNIFF_BYTES) >= 0:
        return "", "binary"
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:  # not the "utf-8-sig" codec: written in Python, it costs twice the decoding of a short note
        text = str(memoryview(data)[bom:], "utf-8") if bom else data.decode("utf-8")  # a view: no copy
    except UnicodeDecodeError as exc:
        return "", f"invalid utf-8 (byte {exc.start + bom})"
    return text, "empty" if is_blank(text) else None


def is_blank(text: str) -> bool:
    """True for a note with nothing but white space in it: `empty`, the one rule for the index and for
    uploads alike."""
    return not text or text.isspace()


def read_note_text(root: Path, rel_path: str) -> str:
    """The text of a note.

    Raises:
        PathOutsideVaultError: the path leaves the vault.
        UnreadableNoteError: the note cannot be read, is binary, or is not valid UTF-8 (`reason` says which).
        InputError: the note is missing, or a folder (message names it).
    """
    return read_note_file(rel_path, resolve_in_vault(root, rel_path))


def read_note_file(rel_path: str, path: str | Path, size: int = 0) -> str:
    """The text of the note `rel_path`, already resolved to `path` inside the vault (`size`: what a stat just gave,
    as `read_file_bytes` takes it).

    Raises:
        UnreadableNoteError: the note cannot be read, is binary, or is not valid UTF-8 (`reason` says which).
        InputError: the note is missing, or a folder (message names it).
    """
    try:
        data = read_file_bytes(path, size)
    except FileNotFoundError:
        raise InputError(f"{rel_path}: note not found in the vault") from None
    except IsADirectoryError:
        raise InputError(f"{rel_path}: is a folder, not a note") from None
    except OSError as exc:
        raise UnreadableNoteError(rel_path, unreadable(exc)) from None
    text, problem = decode_note(data)
    if problem is not None and problem != "empty":
        raise UnreadableNoteError(rel_path, problem)
    return text


def unreadable(exc: OSError) -> str:
    """The reason a note that cannot be read is skipped: `unreadable (Permission denied)`."""
    return f"unreadable ({exc.strerror})"
