"""Which notes nlmsync takes: the one admission rule for a note of the vault, for whoever reads notes to index,
upload or serve them.

A note is refused, in this order, when an `exclude` pattern matches its path or the note a link leads to (it is
then not read), when it cannot be read, is binary, is not valid UTF-8 or holds nothing but white space
(`vault.decode_note`), or when its front matter says `nlmsync: false`. The reasons are the words `index` and
`refresh` report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nlmsync.text.front_matter import FrontMatter, may_opt_out, opted_out, parse_front_matter
from nlmsync.vault import (
    EXCLUDED_BY_FRONT_MATTER,
    EXCLUDED_BY_PATTERN,
    decode_note,
    excluded_by_pattern,
    read_file_bytes,
    resolve_in_vault,
    unreadable,
)


@dataclass(frozen=True, slots=True)
class Admission:
    """What the rule found of a note: `refused`, why nlmsync does not take it (None: it does); `read`, whether its
    file was read; `text`, the note's text once it was read and decoded; `front`, its front matter when it was
    asked for (`with_front`) or read to tell whether the note opts out (None otherwise)."""

    refused: str | None
    read: bool = False
    text: str = ""
    front: FrontMatter | None = None


def admit_note(root: Path, path: str, patterns: Sequence[str], *, fs_path: str | Path | None = None,
               size: int = 0, with_front: bool = False) -> Admission:
    """The admission of the note at vault path `path` (`fs_path`: where it is on disk, if known; `size`: its size,
    if a walk just stat'ed it; `with_front`: the caller wants the front matter read, as the index does). A note
    of many megabytes is decoded once and its bytes dropped before its front matter is read; its YAML is read
    only when asked for or when it could opt the note out (`may_opt_out`)."""
    if excluded_by_pattern(root, path, patterns):
        return Admission(EXCLUDED_BY_PATTERN)
    try:
        data = read_file_bytes(fs_path if fs_path is not None else resolve_in_vault(root, path), size)
    except OSError as exc:
        return Admission(unreadable(exc))
    text, problem = decode_note(data)
    del data
    if problem is not None:
        return Admission(problem, read=True)
    front = parse_front_matter(text) if with_front or may_opt_out(text) else None
    if front is not None and opted_out(front):
        return Admission(EXCLUDED_BY_FRONT_MATTER, read=True)
    return Admission(None, read=True, text=text, front=front)
