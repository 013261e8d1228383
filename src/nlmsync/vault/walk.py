"""The vault walk: every `.md` note under the vault with its mtime and size, and what was skipped and why; when
asked, the vault's attachments too (files of the extensions given, `vault.attachments`), listed beside the notes.

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
    has_note_suffix,
    is_valid_name,
    printable_path,
    within,
)

# Walk folders through open descriptors where the platform can (each stat then resolves one name).
_SCANDIR_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)


class NoteFile(NamedTuple):
    """A markdown note found by the walk; `path` is its identity, `fs_path` where it is on disk when that is not
    the vault's folder joined with `path` (a name that is not NFC on disk), else None."""

    path: str
    mtime_ns: int
    size: int
    fs_path: str | None = None


@dataclass(frozen=True)
class SkippedNote:
    """A file or folder the walk found and does not index, and why (`empty`, `symlink loop`, …)."""

    path: str
    reason: str


@dataclass
class VaultScan:
    """What `scan_vault` found: the notes and the attachments, each sorted by path, and what it skipped."""

    notes: list[NoteFile] = field(default_factory=list)
    skipped: list[SkippedNote] = field(default_factory=list)
    attachments: list[NoteFile] = field(default_factory=list)


@dataclass
class VaultListing:
    """What the walk found, as parallel lists (note `i` is `paths[i]`, `mtimes[i]`, `sizes[i]`) in walk
    order, without duplicates; `skipped` sorted by path. The form the index's rescan compares with its
    cache: no object per note. Attachments, when the walk was asked for them, are in the same lists (a path
    that is not a note's, `vault.is_note_path`)."""

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


def scan_vault(root: Path, attachments: frozenset[str] = frozenset()) -> VaultScan:
    """Every `.md` note under `root` with its mtime and size, plus what was skipped and why; and every attachment,
    a file whose extension is one of `attachments` (`vault.attachment_suffixes`; none by default).

    Symlinks are followed only while they stay inside the vault; a directory reached twice
    (a loop, or a second link to the same folder) is skipped. Empty files are skipped here;
    binary and invalid UTF-8 notes are found when they are read. Notes and attachments come sorted by path.

    Raises:
        InputError: `root` is not a readable directory.
    """
    listing = list_vault(root, attachments)
    scan = VaultScan(skipped=listing.skipped)
    for i, (path, mtime, size) in enumerate(zip(listing.paths, listing.mtimes, listing.sizes, strict=True)):
        found = NoteFile(path, mtime, size, listing.renamed.get(i))
        # the walk lists notes and attachments only, and never enters the folders nlmsync does not read
        (scan.notes if not attachments or has_note_suffix(path) else scan.attachments).append(found)
    scan.notes.sort()
    scan.attachments.sort()
    return scan


def check_vault(root: Path) -> None:
    """Refuse a vault that is not a folder, in the one wording every command uses.

    Raises:
        InputError: `root` does not exist, or is not a folder (the message names it).
    """
    if root.is_dir():
        return
    what = "is not a folder" if os.path.lexists(root) else "does not exist"
    raise InputError(f"{printable_path(str(root))}: the vault {what}")


def list_vault(root: Path, attachments: frozenset[str] = frozenset()) -> VaultListing:
    """The walk of `scan_vault` (same files, same skips), as a `VaultListing` in walk order.

    Raises:
        InputError: `root` is not a readable directory.
    """
    check_vault(root)
    walk = _Walk(root, attachments)
    walk.run(str(root))
    listing = walk.listing
    if listing.renamed:  # two files can have one path only when a name was changed to NFC
        _drop_duplicates(listing)
    listing.skipped.sort(key=lambda s: s.path)
    return listing


def _nfc(name: str) -> str:
    if name.isascii() or unicodedata.is_normalized("NFC", name):
        return name
    return unicodedata.normalize("NFC", name)


class _Folder(NamedTuple):
    """A folder the walk is to enter: where it is, its real path once links are resolved, its vault path with a
    trailing `/`, the real folders above it, and whether its vault path is not its name on disk (NFC)."""

    directory: str
    real: str
    rel_prefix: str
    ancestors: frozenset[str]
    renamed_dir: bool


class _FoundNote(NamedTuple):
    """A note found in a folder while it was open: its vault path, where it is on disk, whether that is not the
    vault path (a name that is not NFC), and what its stat gave (a `stat_result`, or the error)."""

    rel: str
    fs_path: str
    renamed: bool
    stat: os.stat_result | OSError


class _Walk:
    """One walk of a vault: the listing it fills and the real folders it has entered (each is walked once).

    A folder is walked with its notes first, in the order the file system lists them (the hot loop: one stat
    per note, little else), then its folders and links by name, so which of two links to one folder is walked
    does not depend on that order. The walk goes depth first without recursion (a stack of the folders' entries
    still to take), so a vault of any depth is walked, and holds one folder open at a time: what a folder's
    entries need of it (a link's target, a linked note's stat) is read while it is open. An attachment (a file of
    one of the `attachments` extensions) is added as a note's link is, outside the hot loop: a vault of notes
    alone pays nothing for it.
    """

    def __init__(self, root: Path, attachments: frozenset[str] = frozenset()) -> None:
        self.attachments = attachments
        self.real_root = os.path.realpath(root)
        self.listing = VaultListing(str(root))
        self.visited: set[str] = {self.real_root}
        # bound once: the hot loop adds a note with three calls and no attribute walk
        self.add_path, self.add_mtime, self.add_size = (self.listing.paths.append, self.listing.mtimes.append,
                                                        self.listing.sizes.append)

    def skip(self, path: str, reason: str) -> None:
        self.listing.skipped.append(SkippedNote(path, reason))

    def run(self, root: str) -> None:
        """Walks the vault from its folder `root`, depth first: a folder's subfolders and linked notes are taken
        in name order, each subfolder whole before the next entry."""
        top = _Folder(root, self.real_root, "", frozenset(), False)
        stack: list[Iterator[_Folder | _FoundNote]] = [iter(self.folder(top))]
        while stack:
            item = next(stack[-1], None)
            if item is None:
                stack.pop()
            elif isinstance(item, _FoundNote):
                self.add_note(item)
            elif item.real in item.ancestors:
                self.skip(item.rel_prefix.rstrip("/"), "symlink loop")
            elif item.real in self.visited:
                self.skip(item.rel_prefix.rstrip("/"), "folder already indexed through another link")
            else:
                self.visited.add(item.real)
                stack.append(iter(self.folder(item)))

    def folder(self, at: _Folder) -> list[_Folder | _FoundNote]:
        """Adds the notes of the folder `at`; returns its subfolders and linked notes, in name order, for the
        walk to take next."""
        dir_fd = None
        try:
            if _SCANDIR_FD:
                dir_fd = os.open(at.directory, _DIR_FLAGS)
            iterator = os.scandir(at.directory if dir_fd is None else dir_fd)
        except OSError as exc:
            if dir_fd is not None:
                os.close(dir_fd)
            self.skip(at.rel_prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})")
            return []
        # With the folder open, each stat looks up one name instead of the whole path; its links are looked at
        # through it before it is closed.
        prefix = at.directory if at.directory.endswith(os.sep) else at.directory + os.sep
        found: list[_Folder | _FoundNote] = []
        try:
            others = self.notes(iterator, prefix, at.rel_prefix, at.renamed_dir)
            if others is not None:
                others.sort(key=lambda e: e.name)
                for entry in others:
                    item = self.other(entry, prefix, at)
                    if item is not None:
                        found.append(item)
        finally:
            if dir_fd is not None:
                os.close(dir_fd)
        return found

    def notes(self, iterator: Iterator[os.DirEntry[str]], prefix: str, rel_prefix: str,
              renamed_dir: bool) -> list[os.DirEntry[str]] | None:
        """Adds the plain `.md` files of an open folder; returns its other entries (folders, links, the rest),
        or None when the folder could not be read to the end."""
        others: list[os.DirEntry[str]] = []
        add_other = others.append
        add_path, add_mtime, add_size, is_regular = self.add_path, self.add_mtime, self.add_size, stat.S_ISREG
        plain_dir = not renamed_dir
        try:
            with iterator:  # type: ignore[attr-defined]
                for entry in iterator:
                    try:
                        if not entry.is_file(follow_symlinks=False):
                            add_other(entry)
                            continue
                    except OSError:
                        continue
                    name = entry.name
                    # the first test is the fast one
                    if not (name.endswith(NOTE_SUFFIX) or has_note_suffix(name)) and not (
                            self.attachments and self.is_attachment(name)):
                        continue
                    if plain_dir and name.isascii():
                        # the common note or attachment, added here (no call per file): an ASCII name is its own
                        # vault path.
                        # The stat's fields by position: reading a stat_result's attribute costs more.
                        try:
                            st = entry.stat()
                        except OSError:
                            pass
                        else:
                            size = st[stat.ST_SIZE]
                            if size and is_regular(st[stat.ST_MODE]):
                                add_path(rel_prefix + name)
                                add_mtime(st.st_mtime_ns)
                                add_size(size)
                                continue
                    self.listed(entry, prefix, rel_prefix, renamed_dir)
        except OSError as exc:
            self.skip(rel_prefix.rstrip("/") or ".", f"unreadable folder ({exc.strerror})")
            return None
        return others

    def is_attachment(self, name: str) -> bool:
        dot = name.rfind(".")
        return dot > 0 and name[dot:].lower() in self.attachments

    def listed(self, entry: os.DirEntry[str], prefix: str, rel_prefix: str, renamed_dir: bool) -> None:
        """Adds the file `entry` (a note or an attachment) or says why not, its name checked first."""
        if entry.name.isascii() or is_valid_name(entry.name):
            self.note(entry, prefix, rel_prefix, renamed_dir)  # says why not, or adds it
        else:
            self.skip(rel_prefix + printable_path(entry.name), INVALID_NAME_ENCODING)

    def note(self, entry: os.DirEntry[str], prefix: str, rel_prefix: str, renamed_dir: bool) -> None:
        """Adds the note `entry` of an open folder, or says why not (`add_note`)."""
        self.add_note(self.found_note(entry, prefix, rel_prefix, renamed_dir))

    @staticmethod
    def found_note(entry: os.DirEntry[str], prefix: str, rel_prefix: str, renamed_dir: bool) -> _FoundNote:
        """The note `entry` (a plain file, or a link already found to stay in the vault) of an open folder."""
        name = entry.name
        shown = name if name.isascii() else _nfc(name)
        try:
            st: os.stat_result | OSError = entry.stat()
        except OSError as exc:
            st = exc
        return _FoundNote(rel_prefix + shown, prefix + name, renamed_dir or shown != name, st)

    def add_note(self, note: _FoundNote) -> None:
        """Adds a found note, or says why not; what is not a regular file once links are followed is no note."""
        st = note.stat
        if isinstance(st, OSError):
            self.skip(note.rel, f"unreadable ({st.strerror})")
            return
        if not stat.S_ISREG(st.st_mode):
            return
        if not st.st_size:
            self.skip(note.rel, "empty")
            return
        if note.renamed:
            self.listing.renamed[len(self.listing.paths)] = note.fs_path
        self.add_path(note.rel)
        self.add_mtime(st.st_mtime_ns)
        self.add_size(st.st_size)

    def other(self, entry: os.DirEntry[str], prefix: str, at: _Folder) -> _Folder | _FoundNote | None:
        """A folder or link of the folder `at`: a folder to walk, a linked note (or attachment) to add, or None
        (skipped with a reason, or passed over)."""
        rel_prefix = at.rel_prefix
        is_note = has_note_suffix(entry.name) or (bool(self.attachments) and self.is_attachment(entry.name))
        is_link = False  # an entry whose type cannot be read is a note's or is passed over
        try:
            is_link = entry.is_symlink()
            is_dir = entry.is_dir()
        except OSError as exc:
            if is_note or is_link:
                reason = "symlink loop" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
                self.skip(rel_prefix + printable_path(_nfc(entry.name)), reason)
            return None
        if not is_valid_name(entry.name):
            if is_dir or is_note:
                self.skip(rel_prefix + printable_path(entry.name), INVALID_NAME_ENCODING)
            return None
        name = _nfc(entry.name)
        rel = rel_prefix + name
        if is_dir and name in IGNORED_DIRS:
            return None
        full = prefix + entry.name
        target = None
        if is_link:
            target = os.path.realpath(full)
            problem = self.link_problem(target)
            if problem is not None:
                if is_dir or is_note:
                    self.skip(rel, problem)
                return None
        if is_dir:
            # a plain folder is where its real parent is (realpath costs a stat per path component)
            real = target if target is not None else os.path.join(at.real, entry.name)
            return _Folder(full, real, rel + "/", at.ancestors | {at.real}, at.renamed_dir or name != entry.name)
        return self.found_note(entry, prefix, rel_prefix, at.renamed_dir) if is_note else None

    def link_problem(self, target: str) -> str | None:
        """Why a link to `target` is not followed (None: it is): it leads out of the vault, nowhere, or into a
        folder nlmsync never reads."""
        if not within(target, self.real_root):
            return "outside vault (symlink)"
        if not os.path.exists(target):
            return "broken symlink"
        inside = os.path.relpath(target, self.real_root).split(os.sep)
        ignored = next((part for part in inside if part in IGNORED_DIRS), None)
        return None if ignored is None else f"symlink into {ignored}/"




def _drop_duplicates(listing: VaultListing) -> None:
    """Two files whose names differ only in Unicode normalization are one path: keep the first in
    (path, mtime, size, fs path) order, report the others under their names on disk (a skip under the kept
    note's own path would stand for it)."""
    notes = sorted(listing.note(i) for i in range(len(listing.paths)))
    kept: list[NoteFile] = []
    previous = None
    for note in notes:
        if note.path == previous:
            on_disk = os.path.relpath(note.fs_path or note.path, listing.root).replace(os.sep, "/")
            listing.skipped.append(SkippedNote(on_disk, f"duplicate of {note.path} after Unicode normalization"))
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
