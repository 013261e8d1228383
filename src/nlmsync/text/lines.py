"""The lines of a text, a block at a time: a note of many megabytes is split without being copied whole."""

from __future__ import annotations

from collections.abc import Iterator


def iter_lines(text: str, start: int = 0, block: int = 1 << 16) -> Iterator[str]:
    """The lines of `text[start:]` with their line breaks, as `str.splitlines(keepends=True)` gives them, one
    block of about `block` characters split at a time: a note of many megabytes is never copied whole."""
    end = len(text)
    while start < end:
        stop = start + block
        while True:
            if stop >= end:
                yield from text[start:].splitlines(keepends=True)
                return
            lines = text[start:stop].splitlines(keepends=True)
            if len(lines) > 1:
                break
            stop += stop - start  # one line longer than the block: take more
        lines.pop()  # it may go on past the block (or be a \r whose \n comes next)
        yield from lines
        start += sum(map(len, lines))
