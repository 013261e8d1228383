"""Exclusion: a note the user keeps out of nlmsync, by a config glob (`exclude`) or by its front matter
(`nlmsync: false`); a symlink does not carry an excluded note past the globs.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from nlmsync.vault.front_matter import parse_front_matter
from nlmsync.vault.paths import link_target, normalize_rel_path


def _glob_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + "(?:/.*)?", re.DOTALL)


def matches_exclude(rel_path: str, patterns: list[str]) -> bool:
    """True when a glob pattern matches the path or one of its folders, ignoring letter case.

    A pattern with a `/` matches from the vault root (`private/**`, `journal/2025-*`); one without
    matches any file or folder name (`*.draft.md`, `private`). `**` spans folders. Case is ignored
    because on a case-insensitive file system (macOS, Windows) `Private/x.md` opens `private/x.md`;
    excluding too much is the safe side.
    """
    if not patterns:
        return False
    rel = normalize_rel_path(rel_path).casefold()
    parts = PurePosixPath(rel).parts
    for pattern in patterns:
        pat = normalize_rel_path(pattern).casefold()
        if not pat:
            continue
        if "/" in pat:
            if _glob_regex(pat).fullmatch(rel):
                return True
        elif any(_glob_regex(pat).fullmatch(part) for part in parts):
            return True
    return False


def excluded_by_pattern(root: Path, rel_path: str, patterns: list[str]) -> bool:
    """`matches_exclude` for the path and, when it is reached through a link, for the note it leads to:
    a link must not carry an excluded note past the exclude setting."""
    if not patterns:
        return False
    if matches_exclude(rel_path, patterns):
        return True
    target = link_target(root, rel_path)
    return target is not None and matches_exclude(target, patterns)


def is_excluded(rel_path: str, text: str | None, patterns: list[str], *, root: Path | None = None) -> bool:
    """True for a note the user keeps out of nlmsync: a config glob matches (with `root`, also the note
    a link leads to), or front matter `nlmsync: false`."""
    if excluded_by_pattern(root, rel_path, patterns) if root is not None else matches_exclude(rel_path, patterns):
        return True
    if text is not None:
        flag = parse_front_matter(text).data.get("nlmsync")
        if flag is False:
            return True
    return False
