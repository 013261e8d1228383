"""Mapping an answer's citations back to vault notes: where in the note the cited text is, under which heading."""

from __future__ import annotations

import re

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
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
    """The text of the nearest markdown heading starting at or before `offset` (code fences ignored)."""
    heading: str | None = None
    fence: str | None = None
    position = 0
    for line in text.splitlines(keepends=True):
        if position > offset:
            break
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)[0]
            fence = None if fence == marker else (fence or marker)
        elif fence is None:
            heading_match = _HEADING.match(line.rstrip("\r\n"))
            if heading_match:
                heading = heading_match.group(2)
        position += len(line)
    return heading
