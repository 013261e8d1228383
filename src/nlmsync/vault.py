"""Everything about the vault's files on disk: walking, path identity, reading, front matter, exclusion.

Paths inside nlmsync are vault-relative, POSIX, Unicode NFC (`normalize_rel_path`), so a note saved
with an NFD name on macOS is the same note. The walk (`scan_vault`) never enters `.nlmsync/`,
`.obsidian/`, `.trash/` or `.git/`, never follows a symlink out of the vault or around a loop, and
reports what it skipped instead of failing — a name that is not valid UTF-8 (`invalid file name
encoding`) included: such a name never becomes a vault path, and `printable_path` shows it with its bytes
escaped. Reading (`read_note_text`) refuses binary files and invalid UTF-8 with an `InputError` naming the
note; `decode_note` is the one rule for what is not a readable note (whitespace only is `empty`).
"""

from __future__ import annotations

import codecs
import errno
import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from nlmsync.errors import InputError, PathOutsideVaultError

IGNORED_DIRS = frozenset({".nlmsync", ".obsidian", ".trash", ".git"})
# Walk folders through open descriptors where the platform can (each stat then resolves one name).
_SCANDIR_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOTE_SUFFIX = ".md"
_BINARY_SNIFF_BYTES = 8192
INVALID_NAME_ENCODING = "invalid file name encoding"


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


@dataclass(frozen=True)
class FrontMatter:
    """Parsed YAML front matter (a small, safe subset) and where the markdown body starts."""

    data: dict[str, Any]
    body_start: int


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


def is_note_path(rel_path: str) -> bool:
    """True for a `.md` path outside the folders nlmsync never indexes."""
    parts = normalize_rel_path(rel_path).split("/")
    return parts[-1].lower().endswith(NOTE_SUFFIX) and not any(part in IGNORED_DIRS for part in parts[:-1])


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


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
                if not _within(target, real_root):
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
    if linked and not _within(os.path.realpath(candidate), os.path.realpath(root)):
        raise PathOutsideVaultError(f"{rel_path}: symlink leads outside the vault")
    return Path(candidate)


def decode_note(data: bytes) -> tuple[str, str | None]:
    """The text of a note's bytes (a UTF-8 BOM dropped) and why they are not a readable note — `binary`,
    `invalid utf-8 …` (the text is then empty) or `empty` (see `is_blank`) — or None. Decodes once and
    copies nothing else, however large the note."""
    if b"\x00" in data[:_BINARY_SNIFF_BYTES]:
        return "", "binary"
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        return "", f"invalid utf-8 (byte {exc.start + bom})"
    return text, "empty" if is_blank(text) else None


def is_blank(text: str) -> bool:
    """True for a note with nothing but white space in it: `empty`, the one rule for the index and for
    uploads alike."""
    return not text or text.isspace()


def read_note_text(root: Path, rel_path: str) -> str:
    """The text of a note.

    Raises:
        PathOutsideVaultError: the path leaves the vault.
        InputError: the note is missing, unreadable, binary, or not valid UTF-8 (message names it).
    """
    return read_note_file(rel_path, resolve_in_vault(root, rel_path))


def read_note_file(rel_path: str, path: Path) -> str:
    """The text of the note `rel_path`, already resolved to `path` inside the vault.

    Raises:
        InputError: the note is missing, unreadable, binary, or not valid UTF-8 (message names it).
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{rel_path}: note not found in the vault") from None
    except IsADirectoryError:
        raise InputError(f"{rel_path}: is a folder, not a note") from None
    except OSError as exc:
        raise InputError(f"{rel_path}: cannot read note ({exc.strerror})") from None
    text, problem = decode_note(data)
    if problem is not None and problem != "empty":
        raise InputError(f"{rel_path}: cannot read note: {problem}")
    return text


def iter_lines(text: str, start: int = 0, block: int = 1 << 16) -> Iterator[str]:
    """The lines of `text[start:]` with their line breaks, as `str.splitlines(keepends=True)` gives them, one
    block of about `block` characters split at a time: a note of many megabytes is never copied whole."""
    end = len(text)
    while start < end:
        stop = start + block
        while True:
            if stop >= end:
                yield from text[start:].splitlines(keepends=True)
                return
            lines = text[start:stop].splitlines(keepends=True)
            if len(lines) > 1:
                break
            stop += stop - start  # one line longer than the block: take more
        lines.pop()  # it may go on past the block (or be a \r whose \n comes next)
        yield from lines
        start += sum(map(len, lines))


# --- front matter: a safe subset of YAML (scalars, inline and block lists) ---

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


# --- exclusion ---

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


def link_target(root: Path, rel_path: str) -> str | None:
    """The vault-relative path a note really is when `rel_path` reaches it through a symlink (of the
    note or of a folder above it); None when it is no link, or leads outside the vault."""
    full = os.path.join(root, *normalize_rel_path(rel_path).split("/"))
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if not _within(real, real_root) or real == real_root:
        return None
    target = normalize_rel_path(os.path.relpath(real, real_root).replace(os.sep, "/"))
    return target if target != normalize_rel_path(rel_path) else None


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
