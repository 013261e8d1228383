"""Markdown fields of a note (spec §3.2): heading text, body text and the vault path.

Heading text is every ATX heading (`## Title`) and setext heading (a line underlined with `===`
or `---`) outside fenced code, plus the front matter's `title`, `aliases` and `tags`. Body text
is everything else, fenced code included, and the values of the other front matter keys
(the `nlmsync` switch itself is not text). The path field is the vault-relative path.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from nlmsync.search.tokenize import tokenize, tokenize_path
from nlmsync.vault import FrontMatter, parse_front_matter

HEADING_KEYS = ("title", "aliases", "tags")
_NOT_TEXT_KEYS = frozenset({"nlmsync"})

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class NoteText:
    """The two text fields of a note, before tokenization."""

    heading: str
    body: str


@dataclass(frozen=True)
class NoteFields:
    """Token counts per field and the field lengths (token counts) the weighted BM25 needs."""

    body: Counter[str]
    heading: Counter[str]
    path: Counter[str]

    @property
    def lengths(self) -> tuple[int, int, int]:
        return (sum(self.body.values()), sum(self.heading.values()), sum(self.path.values()))


def _front_matter_text(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list):
        return [str(item) for item in value if item is not None]
    return [str(value)]


def split_markdown(text: str, front: FrontMatter | None = None) -> NoteText:
    """Separate heading text from body text (front matter included as described above)."""
    if front is None:
        front = parse_front_matter(text)
    heading: list[str] = []
    body: list[str] = []
    for key, value in front.data.items():
        if key.lower() in HEADING_KEYS:
            heading.extend(_front_matter_text(value))
        elif key.lower() not in _NOT_TEXT_KEYS:
            body.extend(_front_matter_text(value))

    fence: str | None = None
    paragraph_start: int | None = None  # index in `body` where the open paragraph begins
    for line in text[front.body_start:].splitlines():
        if fence is not None:
            body.append(line)
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            continue
        opening = _FENCE_OPEN.match(line)
        if opening:
            fence = opening.group(1)
            body.append(line)
            paragraph_start = None
            continue
        atx = _ATX.match(line)
        if atx:
            heading.append(atx.group(2) or "")
            paragraph_start = None
            continue
        if paragraph_start is not None and _SETEXT.match(line):
            # a setext underline turns the whole paragraph above it into one heading
            heading.append(" ".join(body[paragraph_start:]))
            del body[paragraph_start:]
            paragraph_start = None
            continue
        if line.strip():
            if paragraph_start is None:
                paragraph_start = len(body)
            body.append(line)
        else:
            paragraph_start = None
    return NoteText(heading="\n".join(heading), body="\n".join(body))


def note_fields(rel_path: str, text: str, front: FrontMatter | None = None) -> NoteFields:
    """Tokenized fields of the note at `rel_path` with this text (`front`: its front matter, if parsed)."""
    parts = split_markdown(text, front)
    return NoteFields(body=Counter(tokenize(parts.body)), heading=Counter(tokenize(parts.heading)),
                      path=Counter(tokenize_path(rel_path)))
