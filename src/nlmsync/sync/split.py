"""Splitting a note that exceeds NotebookLM's source limits into numbered parts.

A source holds at most 500,000 words and one request carries at most 1,000,000 bytes of inline
text. A larger note is cut on paragraph or heading boundaries (falling back to line, then word, then
character boundaries only for a single block that is itself too large) and packed greedily into as
few parts as possible. Splitting is lossless: the parts joined give back the note exactly.
"""

from __future__ import annotations

import re

MAX_SOURCE_WORDS = 500_000
MAX_SOURCE_BYTES = 1_000_000


def split_key(max_words: int = MAX_SOURCE_WORDS, max_bytes: int = MAX_SOURCE_BYTES) -> str:
    """The split limits as recorded with a note's part hashes (`NoteHashes.split`): hashes made with other
    limits do not stand for the note."""
    return f"{max_words}/{max_bytes}"

# Zero-width cut points: after a blank line (a paragraph ends) and before an ATX heading line.
_BLOCK_BOUNDARY = re.compile(r"(?<=\n\n)(?=[^\n])|(?<=\n)(?=#{1,6}[ \t])")
_WORD_BOUNDARY = re.compile(r"(?<=\s)(?=\S)")


def _words(text: str) -> int:
    return len(text.split())


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _fits(text: str, max_words: int, max_bytes: int) -> bool:
    # A character is at most 4 bytes, and a word is at least one character and one separator: an
    # ordinary note fits without being encoded or cut into words.
    length = len(text)
    if 4 * length > max_bytes and _size(text) > max_bytes:
        return False
    return (length + 1) // 2 <= max_words or _words(text) <= max_words


def _hard_cut(text: str, max_bytes: int) -> list[str]:
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + max_bytes)
        while _size(text[start:end]) > max_bytes:
            end -= max(1, (end - start) // 8)
        pieces.append(text[start:end])
        start = end
    return pieces


def _atoms(text: str, max_words: int, max_bytes: int) -> list[str]:
    """Pieces of `text`, each within the limits, cut at the coarsest boundary that works."""
    splitters = (
        lambda s: _BLOCK_BOUNDARY.split(s),
        lambda s: s.splitlines(keepends=True),
        lambda s: _WORD_BOUNDARY.split(s),
    )

    def cut(piece: str, level: int) -> list[str]:
        if _fits(piece, max_words, max_bytes):
            return [piece]
        if level == len(splitters):
            return _hard_cut(piece, max_bytes)
        children = [c for c in splitters[level](piece) if c]
        if len(children) <= 1:
            return cut(piece, level + 1)
        return [atom for child in children for atom in cut(child, level + 1)]

    return cut(text, 0)


def split_note(text: str, max_words: int = MAX_SOURCE_WORDS, max_bytes: int = MAX_SOURCE_BYTES) -> list[str]:
    """The parts to upload for `text`: `[text]` when it fits, else greedily packed boundary-cut parts."""
    if _fits(text, max_words, max_bytes):
        return [text]
    parts: list[str] = []
    current: list[str] = []
    words = size = 0
    for atom in _atoms(text, max_words, max_bytes):
        atom_words, atom_size = _words(atom), _size(atom)
        if current and (words + atom_words > max_words or size + atom_size > max_bytes):
            parts.append("".join(current))
            current, words, size = [], 0, 0
        current.append(atom)
        words += atom_words
        size += atom_size
    if current:
        parts.append("".join(current))
    return parts
