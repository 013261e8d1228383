"""Content hashes and the deterministic titles of uploaded sources.

Every source nlmsync uploads is titled with its vault path and a short hash of the exact text
uploaded (`notes/heapsort.md · 3f9a12c0`, or `notes/big.md (part 2/3) · 3f9a12c0` for a part of a
split note). A title is therefore unique to its content, which lets a crashed or ambiguous add be
recovered by looking for that exact title remotely instead of uploading twice.
"""

from __future__ import annotations

import re

import xxhash

MAX_TITLE_CHARS = 500
SHORT_HASH_CHARS = 8
TITLE_SEPARATOR = " · "
_ELLIPSIS = "…"
_TITLE_PATTERN = re.compile(r"^(?P<path>.+?)(?: \(part (?P<part>\d+)/(?P<count>\d+)\))? · (?P<hash>[0-9a-f]{8})$")


def content_hash(text: str) -> str:
    """xxh3-128 (hex) of the UTF-8 bytes of `text`, the exact text uploaded."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def short_hash(full_hash: str) -> str:
    return full_hash[:SHORT_HASH_CHARS]


def source_title(path: str, part_hash: str, part: int = 0, part_count: int = 1) -> str:
    """The title of one uploaded source, at most 500 characters.

    `part` is zero-based; a note uploaded whole (`part_count == 1`) has no part marker. A path too long
    for the limit keeps its end (the file name), prefixed with an ellipsis.
    """
    marker = f" (part {part + 1}/{part_count})" if part_count > 1 else ""
    suffix = f"{marker}{TITLE_SEPARATOR}{short_hash(part_hash)}"
    room = MAX_TITLE_CHARS - len(suffix)
    shown = path if len(path) <= room else _ELLIPSIS + path[len(path) - room + len(_ELLIPSIS):]
    return shown + suffix


def looks_managed(title: str) -> bool:
    """True when `title` has the shape of a title nlmsync gives its uploads."""
    return _TITLE_PATTERN.match(title) is not None


def parse_title(title: str) -> tuple[str, str] | None:
    """The vault path (as shown: a long one starts with an ellipsis) and the short content hash of a title
    nlmsync gives its uploads; None for any other title."""
    match = _TITLE_PATTERN.match(title)
    return (match.group("path"), match.group("hash")) if match else None
