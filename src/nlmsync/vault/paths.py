"""Path identity in the vault: the canonical vault-relative form, which paths are notes, names that are not
UTF-8, and confinement (`resolve_in_vault`, `link_target`): no path leaves the vault.

Paths inside nlmsync are vault-relative, POSIX, Unicode NFC (`normalize_rel_path`), so a note saved with an
NFD name on macOS is the same note.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path

from nlmsync.errors import PathOutsideVaultError

STATE_DIR_NAME = ".nlmsync"  # nlmsync's own folder in the vault (state file, config)
STATE_FILE_NAME = "state.db"  # the state file in it, unless one is named
# The folders nlmsync never reads, at any depth: its own, Obsidian's settings and trash, git's.
IGNORED_DIRS = frozenset({STATE_DIR_NAME, ".obsidian", ".trash", ".git"})
NOTE_SUFFIX = ".md"  # what makes a file a note, in any letter case (`has_note_suffix`)
INVALID_NAME_ENCODING = "invalid file name encoding"


def normalize_rel_path(p: str) -> str:
    """A vault-relative path in canonical form: `/` separators, NFC, no `./`, no empty parts."""
    parts = [part for part in p.replace("\\", "/").split("/") if part not in ("", ".")]
    return unicodedata.normalize("NFC", "/".join(parts))


def is_valid_name(name: str) -> bool:
    """False for a file name (or path) that is not valid UTF-8 on disk: Python hands such a name over with
    the bad bytes as lone surrogates, which no UTF-8 output (the state file, JSON, a terminal) can take."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(path: str) -> str:
    """`path` as it can be shown or stored: bytes that are not UTF-8 as `\\xe9`, other lone surrogates as
    `\\udc80`; a valid path comes back as it is."""
    if is_valid_name(path):
        return path
    try:
        raw = path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = path.encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def has_note_suffix(name: str) -> bool:
    """True for a file name (or path) ending in `.md`, in any letter case (`Note.MD` is a note)."""
    return name.lower().endswith(NOTE_SUFFIX)


def is_note_path(rel_path: str) -> bool:
    """True for a `.md` path outside the folders nlmsync never indexes."""
    parts = normalize_rel_path(rel_path).split("/")
    return has_note_suffix(parts[-1]) and not any(part in IGNORED_DIRS for part in parts[:-1])


def within(path: str, root: str) -> bool:
    """True when the file system path `path` is `root` or below it."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _find_by_normalized_name(parent: Path, name: str) -> Path | None:
    """The entry of `parent` whose name is `name` up to Unicode normalization (NFD on disk)."""
    try:
        with os.scandir(parent) as entries:
            for entry in entries:
                if unicodedata.normalize("NFC", entry.name) == name:
                    return Path(entry.path)
    except OSError:
        return None
    return None


def resolve_in_vault(root: Path, rel_path: str) -> Path:
    """The file system path of a vault-relative path, refusing anything that leaves the vault.

    Raises:
        PathOutsideVaultError: an absolute path, a `..` component, a symlink leading out, a NUL byte, or a
            name that is not valid UTF-8 (no note of the vault has one).
    """
    if "\0" in rel_path:
        raise PathOutsideVaultError(f"{printable_path(rel_path)!r}: a path cannot contain a NUL byte")
    if not is_valid_name(rel_path):
        raise PathOutsideVaultError(f"{printable_path(rel_path)}: {INVALID_NAME_ENCODING} (not valid UTF-8)")
    raw = rel_path.replace("\\", "/")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
        raise PathOutsideVaultError(f"{rel_path}: absolute paths are not allowed; give a vault-relative path")
    if ".." in raw.split("/"):
        raise PathOutsideVaultError(f"{rel_path}: path leaves the vault ('..')")
    rel = normalize_rel_path(raw)
    if not rel:
        raise PathOutsideVaultError(f"{rel_path!r}: empty path")
    candidate = os.fspath(root)
    linked = False  # only a symlink below the root can lead out: without one, no realpath is needed
    for part in rel.split("/"):
        nxt = os.path.join(candidate, part)
        try:
            linked = stat.S_ISLNK(os.lstat(nxt).st_mode) or linked
        except OSError:
            found = _find_by_normalized_name(Path(candidate), part)
            if found is not None:
                nxt = os.fspath(found)
                linked = linked or os.path.islink(nxt)
        candidate = nxt
    if linked and not within(os.path.realpath(candidate), os.path.realpath(root)):
        raise PathOutsideVaultError(f"{rel_path}: symlink leads outside the vault")
    return Path(candidate)


def link_target(root: Path, rel_path: str) -> str | None:
    """The vault-relative path a note really is when `rel_path` reaches it through a symlink (of the
    note or of a folder above it); None when it is no link, or leads outside the vault."""
    full = os.path.join(root, *normalize_rel_path(rel_path).split("/"))
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if not within(real, real_root) or real == real_root:
        return None
    target = normalize_rel_path(os.path.relpath(real, real_root).replace(os.sep, "/"))
    return target if target != normalize_rel_path(rel_path) else None
