"""Front matter: the block between `---` lines at the very start of a note, read as a small, safe subset of
YAML (scalars, inline and block lists); never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from nlmsync.vault.notes import iter_lines


@dataclass(frozen=True)
class FrontMatter:
    """Parsed YAML front matter (a small, safe subset) and where the markdown body starts."""

    data: dict[str, Any]
    body_start: int


_FENCE = re.compile(r"^---[ \t]*\r?$")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")
_KEY_LINE = re.compile(r"^([A-Za-z_][\w .-]*?)\s*:(?:\s+(.*?))?\s*$")
_ITEM_LINE = re.compile(r"^\s+-\s*(.*?)\s*$")


def _scalar(raw: str) -> Any:
    value = raw.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    if " #" in value:
        value = value.split(" #", 1)[0].rstrip()
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("null", "~", ""):
        return None
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def _value(raw: str) -> Any:
    value = raw.strip()
    if value.startswith("[") and value.endswith("]"):
        inner = value[1:-1].strip()
        return [_scalar(item) for item in inner.split(",") if item.strip()] if inner else []
    return _scalar(value)


def parse_front_matter(text: str) -> FrontMatter:
    """Front matter delimited by `---` lines at the very start of a note; never raises.

    Lines that are not `key: value` or list items are ignored, so odd YAML degrades to less data.
    """
    lines = iter_lines(text)
    first = next(lines, None)
    if first is None or not _FENCE.match(first.removeprefix("\ufeff")):
        return FrontMatter({}, 0)
    data: dict[str, Any] = {}
    offset = len(first)
    current: str | None = None
    for line in lines:
        offset += len(line)
        stripped = line.rstrip("\r\n")
        if _CLOSE.match(stripped):
            return FrontMatter(data, offset)
        item = _ITEM_LINE.match(stripped)
        if item and current is not None:
            existing = data.get(current)
            data[current] = (existing if isinstance(existing, list) else []) + [_scalar(item.group(1))]
            continue
        key = _KEY_LINE.match(stripped)
        if key:
            current = key.group(1).strip()
            data[current] = _value(key.group(2)) if key.group(2) else None
    return FrontMatter({}, 0)
