"""The text of a pack: its notes one after another, each unchanged under a heading that is its vault path, so a
pack changes exactly when one of its notes (or its membership) does."""

from __future__ import annotations

from collections.abc import Sequence

_CONTROL = {i: f"\\x{i:02x}" for i in range(32)} | {0x7F: "\\x7f"}


def path_heading(path: str) -> str:
    """The heading line a note's block starts with (control characters escaped: a path is one line)."""
    return f"# {path}" if path.isprintable() else f"# {path.translate(_CONTROL)}"


def block_size(path: str, size: int) -> int:
    """The bytes a note of `size` bytes takes in a pack, at most: heading, blank line, text, separators."""
    return len(path_heading(path).encode("utf-8", "surrogateescape")) + size + 4


def compose_pack(members: Sequence[tuple[str, str]]) -> str:
    """The text of a pack holding `members` (path, note text) in that order."""
    return "\n".join(_block(path, text) for path, text in members)


def _block(path: str, text: str) -> str:
    return f"{path_heading(path)}\n\n{text}" if text.endswith("\n") else f"{path_heading(path)}\n\n{text}\n"
