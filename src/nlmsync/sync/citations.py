"""Mapping an answer's citations back to vault notes: where in the note the cited text is, under which heading."""

from __future__ import annotations

import re

from nlmsync.vault import parse_front_matter

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
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
    """The text of the nearest markdown heading (ATX `## X` or setext, underlined with `===`/`---`)
    starting at or before `offset`; code fences and front matter are not headings."""
    heading: str | None = None
    fence: str | None = None
    paragraph: list[str] = []
    position = parse_front_matter(text).body_start
    for line in text[position:].splitlines(keepends=True):
        if position > offset:
            break
        bare = line.rstrip("\r\n")
        fence_match = _FENCE.match(line)
        if fence_match:
            marker = fence_match.group(1)[0]
            fence = None if fence == marker else (fence or marker)
            paragraph = []
        elif fence is None:
            heading_match = _HEADING.match(bare)
            if heading_match:
                heading = heading_match.group(2)
                paragraph = []
            elif paragraph and _SETEXT.match(bare):
                heading = " ".join(paragraph)
                paragraph = []
            elif bare.strip():
                paragraph.append(bare.strip())
            else:
                paragraph = []
        position += len(line)
    return heading
