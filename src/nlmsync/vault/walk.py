"""The vault walk: every `.md` note under the vault with its mtime and size, and what was skipped and why.

The walk never enters `.nlmsync/`, `.obsidian/`, `.trash/` or `.git/`, never follows a symlink out of the
vault or around a loop, and reports what it skipped instead of failing — a name that is not valid UTF-8
(`invalid file name encoding`) included: such a name never becomes a vault path.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from nlmsync.errors import InputError
from nlmsync.vault.paths import (
    IGNORED_DIRS,
    INVALID_NAME_ENCODING,
    NOTE_SUFFIX,
    is_valid_name,
    printable_path,
    within,
)

# Walk folders through open descriptors where the platform can (each stat then resolves one name).
_SCANDIR_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class NoteFile(NamedTuple):
    """A markdown note found by the walk; `path` is its identity, `fs_path` where it is on disk."""

    path: str
    mtime_ns: int
    size: int
    fs_path: str | None = None


@dataclass(frozen=True)
class SkippedNote:
    path: str
    reason: str


@dataclass
class VaultScan:
    notes: list[NoteFile] = field(default_factory=list)
    skipped: list[SkippedNote] = field(default_factory=list)


@dataclass
class VaultListing:
    """What the walk found, as parallel lists (note `i` is `paths[i]`, `mtimes[i]`, `sizes[i]`) in walk
    order, without duplicates; `skipped` sorted by path. The form the index's rescan compares with its
    cache: no object per note."""

    root: str
    paths: list[str] = field(default_factory=list)
    mtimes: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    skipped: list[SkippedNote] = field(default_factory=list)
    # where note i is on disk when that is not `root`/`paths[i]` (a name that is not NFC on disk)
    renamed: dict[int, str] = field(default_factory=dict)

    def fs_path(self, i: int) -> str:
        return self.renamed.get(i) or os.path.join(self.root, self.paths[i])

    def note(self, i: int) -> NoteFile:
        return NoteFile(self.paths[i], self.mtimes[i], self.sizes[i], self.fs_path(i))


def scan_vault(root: Path) -> VaultScan:
    """Every `.md` note under `root` with its mtime and size, plus what was skipped and why.

    Symlinks are followed only while they stay inside the vault; a directory reached twice
    (a loop, or a second link to the same folder) is skipped. Empty notes are skipped here;
    binary and invalid UTF-8 notes are found when they are read. Notes come sorted by path.

    Raises:
        InputError: `root` is not a readable directory.
    """
    listing = list_vault(root)
    notes = [listing.note(i) for i in range(len(listing.paths))]
    notes.sort()
    return VaultScan(notes, listing.skipped)


def list_vault(root: Path) -> VaultListing:
    """The walk of `scan_vault` (same notes, same skips), as a `VaultListing` in walk order.

    Raises:
        InputError: `root` is not a readable directory.
    """
    if not root.is_dir():
        raise InputError(f"{root}: vault folder does not exist or is not a directory")
    real_root = os.path.realpath(root)
    listing = VaultListing(str(root))
    paths, mtimes, sizes, skipped, renamed = (listing.paths, listing.mtimes, listing.sizes, listing.skipped,
                                              listing.renamed)
    add_path, add_mtime, add_size = paths.append, mtimes.append, sizes.append
    visited_dirs: set[str] = {real_root}
    suffix = NOTE_SUFFIX
    is_nfc = unicodedata.is_normalized
    is_regular = stat.S_ISREG

    def canonical(name: str) -> str:
        if name.isascii() or is_nfc("NFC", name):
            return name
        return unicodedata.normalize("NFC", name)

    def add_note(rel: str, full: str, entry: os.DirEntry[str], renamed_dir: bool) -> None:
        try:
            st = entry.stat()
        except OSError as exc:
            skipped.append(SkippedNote(rel, f"unreadable ({exc.strerror})"))
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if st.st_size == 0:
            skipped.append(SkippedNote(rel, "empty"))
            return
        if renamed_dir or not rel.endswith(entry.name):
            renamed[len(paths)] = full
        add_path(rel)
        add_mtime(st.st_mtime_ns)
        add_size(st.st_size)

    def walk(directory: str, real_dir: str, rel_prefix: str, ancestors: frozenset[str], renamed_dir: bool) -> None:
        """Notes of `directory` (`real_dir` once symlinks are resolved) and, recursively, its folders;
        `renamed_dir`: `rel_prefix` is not the folder's name on disk (NFC)."""
        dir_fd = None
        try:
            if _SCANDIR_FD:
                dir_fd = os.open(directory, _DIR_FLAGS)
            iterator = os.scandir(directory if dir_fd is None else dir_fd)
        except OSError as exc:
            if dir_fd is not None:
                os.close(dir_fd)
            skipped.append(SkippedNote(rel_prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})"))
            return
        # With the folder open, each stat looks up one name instead of the whole path. The folder stays
        # open until its subfolders are walked: its links are looked at through it.
        try:
            walk_open(directory, real_dir, rel_prefix, ancestors, renamed_dir, iterator)
        finally:
            if dir_fd is not None:
                os.close(dir_fd)

    def walk_open(directory: str, real_dir: str, rel_prefix: str, ancestors: frozenset[str], renamed_dir: bool,
                  iterator: Iterator[os.DirEntry[str]]) -> None:
        prefix = directory if directory.endswith(os.sep) else directory + os.sep
        others: list[os.DirEntry[str]] = []
        try:
            with iterator:  # type: ignore[attr-defined]
                # the hot loop (a vault of 40k notes spends its scan here): one stat per note, little else
                for entry in iterator:
                    name = entry.name
                    try:
                        plain_file = entry.is_file(follow_symlinks=False)
                    except OSError:
                        continue
                    if not plain_file:
                        others.append(entry)
                        continue
                    if not (name.endswith(suffix) or name.lower().endswith(suffix)):
                        continue
                    if not name.isascii() and not is_valid_name(name):
                        skipped.append(SkippedNote(rel_prefix + printable_path(name), INVALID_NAME_ENCODING))
                        continue
                    try:
                        st = entry.stat()
                    except OSError as exc:
                        skipped.append(SkippedNote(rel_prefix + canonical(name), f"unreadable ({exc.strerror})"))
                        continue
                    if not is_regular(st.st_mode):
                        continue
                    size = st.st_size
                    if not size:
                        skipped.append(SkippedNote(rel_prefix + canonical(name), "empty"))
                        continue
                    if name.isascii():
                        if renamed_dir:
                            renamed[len(paths)] = prefix + name
                        add_path(rel_prefix + name)
                    else:
                        rel = rel_prefix + canonical(name)
                        if renamed_dir or not rel.endswith(name):
                            renamed[len(paths)] = prefix + name
                        add_path(rel)
                    add_mtime(st.st_mtime_ns)
                    add_size(size)
        except OSError as exc:
            skipped.append(SkippedNote(rel_prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})"))
            return
        # folders and links by name, so which of two links to one folder is walked does not depend on
        # the order the file system lists them in
        others.sort(key=lambda e: e.name)
        for entry in others:
            full = prefix + entry.name
            is_note = entry.name.lower().endswith(suffix)
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir()
            except OSError as exc:
                if is_note or is_link:
                    reason = "symlink loop" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
                    skipped.append(SkippedNote(rel_prefix + printable_path(canonical(entry.name)), reason))
                continue
            if not is_valid_name(entry.name):
                if is_dir or is_note:
                    skipped.append(SkippedNote(rel_prefix + printable_path(entry.name), INVALID_NAME_ENCODING))
                continue
            name = canonical(entry.name)
            rel = rel_prefix + name
            if is_dir and name in IGNORED_DIRS:
                continue
            if is_link:
                target = os.path.realpath(full)
                if not within(target, real_root):
                    if is_dir or is_note:
                        skipped.append(SkippedNote(rel, "outside vault (symlink)"))
                    continue
                if not os.path.exists(target):
                    if is_note:
                        skipped.append(SkippedNote(rel, "broken symlink"))
                    continue
                inside = os.path.relpath(target, real_root).split(os.sep)
                if any(part in IGNORED_DIRS for part in inside):
                    if is_dir or is_note:
                        ignored = next(part for part in inside if part in IGNORED_DIRS)
                        skipped.append(SkippedNote(rel, f"symlink into {ignored}/"))
                    continue
            if is_dir:
                # a plain folder is where its real parent is (realpath costs a stat per path component)
                real = target if is_link else os.path.join(real_dir, entry.name)
                if real in ancestors:
                    skipped.append(SkippedNote(rel, "symlink loop"))
                elif real in visited_dirs:
                    skipped.append(SkippedNote(rel, "folder already indexed through another link"))
                else:
                    visited_dirs.add(real)
                    walk(full, real, rel + "/", ancestors | {real}, renamed_dir or name != entry.name)
            elif is_note:
                add_note(rel, full, entry, renamed_dir)

    walk(str(root), real_root, "", frozenset({real_root}), False)
    if renamed:  # two files can have one path only when a name was changed to NFC
        _drop_duplicates(listing)
    skipped.sort(key=lambda s: s.path)
    return listing


def _drop_duplicates(listing: VaultListing) -> None:
    """Two files whose names differ only in Unicode normalization are one path: keep the first in
    (path, mtime, size, fs path) order, report the others."""
    notes = sorted(listing.note(i) for i in range(len(listing.paths)))
    kept: list[NoteFile] = []
    previous = None
    for note in notes:
        if note.path == previous:
            listing.skipped.append(SkippedNote(note.path, "duplicate name after Unicode normalization"))
            continue
        kept.append(note)
        previous = note.path
    listing.paths[:] = [n.path for n in kept]
    listing.mtimes[:] = [n.mtime_ns for n in kept]
    listing.sizes[:] = [n.size for n in kept]
    listing.renamed.clear()
    for i, note in enumerate(kept):
        if note.fs_path != os.path.join(listing.root, note.path):
            listing.renamed[i] = note.fs_path  # type: ignore[assignment]
