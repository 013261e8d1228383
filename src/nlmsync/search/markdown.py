"""Markdown fields of a note (spec §3.2): heading text, body text and the vault path.

Heading text is every ATX heading (`## Title`) and setext heading (a line underlined with `===`
or `---`) outside fenced code, plus the front matter's `title`, `aliases` and `tags`. Body text
is everything else, fenced code included, and the values of the other front matter keys
(the `nlmsync` switch itself is not text). The path field is the vault-relative path.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

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


LineKind = Literal["heading", "setext", "code", "text", "blank"]


@dataclass(frozen=True)
class MarkdownLine:
    """One line of a note as markdown sees it.

    `kind` is `heading` (ATX; `text` is the title), `setext` (an underline: the `absorbed` text
    lines just before it are the heading, `text` is their words and `offset` where they start),
    `code` (inside or opening/closing a fence), `text` or `blank`. `offset` is where the line
    starts in the whole note.
    """

    kind: LineKind
    offset: int
    text: str
    absorbed: int = 0


def markdown_lines(text: str, start: int = 0) -> Iterator[MarkdownLine]:
    """Walk `text[start:]` line by line, telling headings from fenced code and body text."""
    fence: str | None = None
    paragraph: list[tuple[int, str]] = []  # the open paragraph's lines, for a setext underline
    offset = start
    for raw in text[start:].splitlines(keepends=True):
        line = raw.splitlines()[0]  # the line without its terminator, whichever splitlines saw
        here, offset = offset, offset + len(raw)
        if fence is not None:
            if line.strip().startswith(fence) and set(line.strip()) == {fence[0]}:
                fence = None
            yield MarkdownLine("code", here, line)
            continue
        opening = _FENCE_OPEN.match(line)
        if opening:
            fence = opening.group(1)
            paragraph = []
            yield MarkdownLine("code", here, line)
            continue
        atx = _ATX.match(line)
        if atx:
            paragraph = []
            yield MarkdownLine("heading", here, atx.group(2) or "")
            continue
        if paragraph and _SETEXT.match(line):
            yield MarkdownLine("setext", paragraph[0][0], " ".join(p.strip() for _, p in paragraph),
                               absorbed=len(paragraph))
            paragraph = []
            continue
        if line.strip():
            paragraph.append((here, line))
            yield MarkdownLine("text", here, line)
        else:
            paragraph = []
            yield MarkdownLine("blank", here, line)


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
    for item in markdown_lines(text, front.body_start):
        if item.kind == "heading":
            heading.append(item.text)
        elif item.kind == "setext":
            # the whole paragraph above the underline is one heading
            del body[len(body) - item.absorbed:]
            heading.append(item.text)
        elif item.kind != "blank":
            body.append(item.text)
    return NoteText(heading="\n".join(heading), body="\n".join(body))


def note_fields(rel_path: str, text: str, front: FrontMatter | None = None) -> NoteFields:
    """Tokenized fields of the note at `rel_path` with this text (`front`: its front matter, if parsed)."""
    parts = split_markdown(text, front)
    return NoteFields(body=Counter(tokenize(parts.body)), heading=Counter(tokenize(parts.heading)),
                      path=Counter(tokenize_path(rel_path)))
