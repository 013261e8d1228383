"""Exclusion: a note the user keeps out of nlmsync, by a config glob (`exclude`) or by its front matter
(`nlmsync: false`); a symlink does not carry an excluded note past the globs.

The globs are gitignore's, matched by `pathspec` (the library git-style tools use), compiled once per list
of patterns: a pattern with a `/` matches from the vault root, one without matches any file or folder name,
`**` spans folders, `[abc]` is a class, `!pattern` takes a match back, `#` starts a comment. nlmsync adds
two things: letter case is ignored, and a pattern is a vault path (`\\` is `/`, a leading `/` or `./` and a
trailing `/` are dropped). pathspec is imported with the first list of patterns: a vault without `exclude`
never loads it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from nlmsync.text.front_matter import may_opt_out, opted_out, parse_front_matter
from nlmsync.vault.paths import link_target, normalize_rel_path

EXCLUDED_BY_PATTERN = "excluded by pattern"
EXCLUDED_BY_FRONT_MATTER = "excluded (nlmsync: false)"
EXCLUSION_REASONS = frozenset({EXCLUDED_BY_PATTERN, EXCLUDED_BY_FRONT_MATTER})


def check_exclude(patterns: Sequence[str]) -> None:
    """Refuses a list of exclude patterns that gitignore's rules cannot read (`!` alone).

    Raises:
        ValueError: `Invalid git pattern: '!'`, naming the pattern.
    """
    if patterns:
        _matcher(tuple(patterns))


def matches_exclude(rel_path: str, patterns: Sequence[str]) -> bool:
    """True when a glob pattern matches the path or one of its folders, ignoring letter case.

    A pattern with a `/` matches from the vault root (`private/**`, `journal/2025-*`); one without
    matches any file or folder name (`*.draft.md`, `private`). `**` spans folders. Case is ignored
    because on a case-insensitive file system (macOS, Windows) `Private/x.md` opens `private/x.md`;
    excluding too much is the safe side.

    Raises:
        ValueError: a pattern gitignore's rules cannot read (settings are checked with `check_exclude`).
    """
    if not patterns:
        return False
    return _matcher(tuple(patterns))(normalize_rel_path(rel_path).casefold())


@lru_cache(maxsize=32)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], bool]:
    """Whether a normalized, case-folded vault path is excluded by `patterns`."""
    from pathspec import GitIgnoreSpec

    lines = [line for line in (normalize_rel_path(p).casefold() for p in patterns) if line]
    if not lines:
        return lambda _path: False
    with warnings.catch_warnings():
        # `[[]` compiles to a regular expression the re module warns may change meaning; gitignore's is fixed
        warnings.simplefilter("ignore", FutureWarning)
        return GitIgnoreSpec.from_lines(lines).match_file  # a bad pattern: GitIgnorePatternError, a ValueError


def excluded_by_pattern(root: Path, rel_path: str, patterns: Sequence[str]) -> bool:
    """`matches_exclude` for the path and, when it is reached through a link, for the note it leads to:
    a link must not carry an excluded note past the exclude setting."""
    if not patterns:
        return False
    if matches_exclude(rel_path, patterns):
        return True
    target = link_target(root, rel_path)
    return target is not None and matches_exclude(target, patterns)


def exclusion_reason(rel_path: str, text: str | None, patterns: Sequence[str], *,
                     root: Path | None = None) -> str | None:
    """Why the user keeps a note out of nlmsync, in the words `index` and `refresh` report: a config glob
    matches (with `root`, also the note a link leads to) — `EXCLUDED_BY_PATTERN` —, or its front matter says
    `nlmsync: false` — `EXCLUDED_BY_FRONT_MATTER`; None for a note not excluded."""
    if excluded_by_pattern(root, rel_path, patterns) if root is not None else matches_exclude(rel_path, patterns):
        return EXCLUDED_BY_PATTERN
    if text is not None and may_opt_out(text) and opted_out(parse_front_matter(text)):
        return EXCLUDED_BY_FRONT_MATTER
    return None


def is_excluded(rel_path: str, text: str | None, patterns: Sequence[str], *, root: Path | None = None) -> bool:
    """True for a note the user keeps out of nlmsync (`exclusion_reason` gives one)."""
    return exclusion_reason(rel_path, text, patterns, root=root) is not None
