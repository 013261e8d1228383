"""Content hashes and the deterministic titles of uploads (a note's, a part's, a pack's). A title carries the hash
of the words it holds, so a crashed add is found again by its exact title, and any machine proves a source is
nlmsync's by reading it back (`proves`)."""

from __future__ import annotations

import re
from typing import NamedTuple

import xxhash

MAX_TITLE_CHARS = 500
SHORT_HASH_CHARS = 8
TITLE_SEPARATOR = " · "
_ELLIPSIS = "…"
_TITLE_PATTERN = re.compile(r"^(?P<path>.+?)(?: \(part (?P<part>\d+)/(?P<count>\d+)\))? · (?P<hash>[0-9a-f]{8})$")
PACK_RANGE = " … "
_SHORT_HASH = re.compile(r"[^\n]+ · (?P<hash>[0-9a-f]{8})$")
"""The short hash that ends a title of `_TITLE_PATTERN`'s (or a pack's): the same hash that pattern finds, read
from the end of the title instead of trying every length of its path first."""
_PACK_PATTERN = re.compile(r"^(?P<first>.+?)(?: … (?P<last>.+?))? \((?P<count>\d+) notes?\) · (?P<hash>[0-9a-f]{8})$")
UPLOAD_NAME_BYTES = 255
"""The longest file name most file systems take, in bytes: an attachment's upload name is kept within it."""
NAME_SLASH = "\u2215"
"""What stands for `/` in an upload name (DIVISION SLASH, which looks like one and may be in a file name)."""
_UPLOAD_NAME_PATTERN = re.compile(r"^(?P<path>.+?) · (?P<hash>[0-9a-f]{8})(?P<suffix>\.[^./\u2215\s]+)$")


class NoteTitle(NamedTuple):
    """What the title of a note's upload says: the vault path as shown (a long one starts with an ellipsis), the
    part (zero-based) and how many there are, and the short hash of the words."""

    shown: str
    part: int
    part_count: int
    short_hash: str


class PackTitle(NamedTuple):
    """What a pack's title says: its first and last vault paths as shown, how many notes it holds, and the short
    hash of its words."""

    first: str
    last: str
    note_count: int
    short_hash: str


def content_hash(text: str) -> str:
    """xxh3-128 (hex) of the UTF-8 bytes of `text`, the exact text uploaded."""
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8"))


def title_hash(text: str) -> str:
    """The hash a title carries: xxh3-128 (hex) of the text's words in order, one space apart, which is what
    the server keeps of a text (it re-joins the text's blocks as it likes)."""
    return content_hash(" ".join(text.split()))


def short_hash(full_hash: str) -> str:
    return full_hash[:SHORT_HASH_CHARS]


def source_title(path: str, part_hash: str, part: int = 0, part_count: int = 1) -> str:
    """The title of one uploaded source whose text hashes to `part_hash` (`title_hash`), at most 500
    characters.

    `part` is zero-based; a note uploaded whole (`part_count == 1`) has no part marker. A path too long
    for the limit keeps its end (the file name), prefixed with an ellipsis.
    """
    marker = f" (part {part + 1}/{part_count})" if part_count > 1 else ""
    suffix = f"{marker}{TITLE_SEPARATOR}{short_hash(part_hash)}"
    return _shown(path, MAX_TITLE_CHARS - len(suffix)) + suffix


def _shown(path: str, room: int) -> str:
    return path if len(path) <= room else _ELLIPSIS + path[len(path) - room + len(_ELLIPSIS):]


def pack_title(first: str, last: str, count: int, text_hash: str) -> str:
    """The title of a pack of `count` notes from `first` to `last` (vault paths) whose text hashes to
    `text_hash` (`title_hash`), at most 500 characters: the paths share the room, each keeping its end when too
    long."""
    suffix = f" ({count} {'note' if count == 1 else 'notes'}){TITLE_SEPARATOR}{short_hash(text_hash)}"
    if count == 1:
        return _shown(first, MAX_TITLE_CHARS - len(suffix)) + suffix
    room = MAX_TITLE_CHARS - len(suffix) - len(PACK_RANGE)
    first_room = max(room // 2, room - len(last))
    shown_first = _shown(first, first_room)
    return shown_first + PACK_RANGE + _shown(last, room - len(shown_first)) + suffix


def looks_managed(title: str) -> bool:
    """True when `title` has the shape of a title nlmsync gives its uploads (a note's, a part's or a pack's)."""
    return _TITLE_PATTERN.match(title) is not None


def parse_pack_title(title: str) -> PackTitle | None:
    """What a pack's title says; None for any other title."""
    match = _PACK_PATTERN.match(title)
    if match is None:
        return None
    first = match.group("first")
    return PackTitle(first, match.group("last") or first, int(match.group("count")), match.group("hash"))


def title_short_hash(title: str) -> str | None:
    """The short hash an nlmsync title carries (a note's, a part's or a pack's); None for any other title."""
    match = _SHORT_HASH.match(title)
    return match.group("hash") if match is not None else None


def proves(title: str, held: str) -> bool:
    """Whether the text a source holds (`held`, as `source_get_content` hands it back) is what its nlmsync
    title says it is: its words hash to the title's hash. Proof that the source is an upload of nlmsync's."""
    short = title_short_hash(title)
    return short is not None and title_hash(held).startswith(short)


def retitled(title: str, path: str, part: int = 0, part_count: int = 1) -> str:
    """The title of the source titled `title` (a note's or a part's, nlmsync's) once its note lives at `path`:
    the same hash, the new path."""
    short = title_short_hash(title)
    return source_title(path, short or "", part, part_count)


def parse_note_title(title: str) -> NoteTitle | None:
    """What the title nlmsync gives its upload of one note or part says; None for a pack's title and any other
    title."""
    match = _TITLE_PATTERN.match(title)
    if match is None or _PACK_PATTERN.match(title) is not None:
        return None
    count = int(match.group("count") or 1)
    part = int(match.group("part") or 1) - 1
    return NoteTitle(match.group("path"), part, count, match.group("hash"))


def shown_path_matches(shown: str, path: str) -> bool:
    """Whether `path` is the vault path a title shows as `shown` (a long one keeps its end after an ellipsis)."""
    return shown == path or (shown.startswith(_ELLIPSIS) and path.endswith(shown[len(_ELLIPSIS):]))


def parse_title(title: str) -> tuple[str, str] | None:
    """The vault path (as shown: a long one starts with an ellipsis) and the short content hash of a title
    nlmsync gives its uploads of one note, part or attachment — an attachment's also as the server lists it when it
    kept the upload's file name (`upload_name`); None for a pack's title and any other title."""
    match = _TITLE_PATTERN.match(title)
    if match is None:
        return parse_upload_name(title)
    if _PACK_PATTERN.match(title) is not None:
        return None
    return match.group("path"), match.group("hash")


def upload_name(title: str, suffix: str) -> str:
    """The file name an attachment titled `title` is uploaded under, so that a source the server names after its
    file still says what nlmsync's title says: the title with `/` shown as `NAME_SLASH` and the file's extension
    after it (`papers∕paper.pdf · 0123abcd.pdf`); a path too long for a file name keeps its end, after an
    ellipsis."""
    shown, _, rest = title.rpartition(TITLE_SEPARATOR)
    tail = f"{TITLE_SEPARATOR}{rest}{suffix}"
    name = shown.replace("/", NAME_SLASH)
    room = UPLOAD_NAME_BYTES - len(tail.encode("utf-8"))
    if len(name.encode("utf-8")) > room:
        kept = name
        while len((_ELLIPSIS + kept).encode("utf-8")) > room:
            kept = kept[1:]
        name = _ELLIPSIS + kept
    return name + tail


def parse_upload_name(title: str) -> tuple[str, str] | None:
    """The vault path (as shown) and short hash of a source the server titled by the name of nlmsync's upload
    (`upload_name`): a path whose extension the name repeats; None for any other title."""
    match = _UPLOAD_NAME_PATTERN.match(title)
    if match is None:
        return None
    path = match.group("path").replace(NAME_SLASH, "/")
    if not path.lower().endswith(match.group("suffix").lower()):
        return None
    return path, match.group("hash")
