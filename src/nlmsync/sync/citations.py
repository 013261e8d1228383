"""Mapping an answer's citations back to vault notes: where in the note the cited text is, under which heading."""

from __future__ import annotations

import re

from nlmsync.search import markdown_lines
from nlmsync.vault import parse_front_matter

_MAX_MATCH_WORDS = 12


def find_cited_text(text: str, cited: str) -> int | None:
    """The offset in `text` where `cited` starts: exact match first, then whitespace-insensitive."""
    cited = cited.strip()
    if not cited:
        return None
    offset = text.find(cited)
    if offset >= 0:
        return offset
    words = cited.split()[:_MAX_MATCH_WORDS]
    match = re.search(r"\s+".join(re.escape(w) for w in words), text)
    return match.start() if match else None


def heading_above(text: str, offset: int) -> str | None:
    """The text of the nearest markdown heading (ATX `## X` or setext, underlined with `===`/`---`)
    starting at or before `offset`; code fences and front matter are not headings."""
    heading: str | None = None
    for line in markdown_lines(text, parse_front_matter(text).body_start):
        if line.offset > offset:
            break
        if line.kind in ("heading", "setext") and line.text:
            heading = line.text
    return heading
