"""A vault note as a run prepares it: read, or known by its recorded hashes while its file keeps the modification
time and size they were recorded with (`known_note`); split losslessly into parts within the source limits; each
part hashed and titled."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from nlmsync import vault as vault_files
from nlmsync.documents.model import TEXT_CUT, DocumentText
from nlmsync.errors import InputError, UnreadableNoteError
from nlmsync.store import NoteHashes
from nlmsync.store.document_texts import DocumentTexts
from nlmsync.sync.branches import Branch
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.titles import content_hash, source_title, title_hash
from nlmsync.text import Admission, admit_note

if TYPE_CHECKING:
    from nlmsync.documents import DocumentReader
    from nlmsync.sync.run import SyncDeps

MAX_SOURCE_WORDS = 500_000
MAX_SOURCE_BYTES = 1_000_000


def split_key(max_words: int = MAX_SOURCE_WORDS, max_bytes: int = MAX_SOURCE_BYTES) -> str:
    """The split limits as recorded with a note's part hashes (`NoteHashes.split`): hashes made with other
    limits do not stand for the note."""
    return f"{max_words}/{max_bytes}"

# Zero-width cut points: after a blank line (a paragraph ends) and before an ATX heading line.
_BLOCK_BOUNDARY = re.compile(r"(?<=\n\n)(?=[^\n])|(?<=\n)(?=#{1,6}[ \t])")
_WORD_BOUNDARY = re.compile(r"(?<=\s)(?=\S)")


def _words(text: str) -> int:
    return len(text.split())


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _fits(text: str, max_words: int, max_bytes: int) -> bool:
    # A character is at most 4 bytes, and a word is at least one character and one separator: an
    # ordinary note fits without being encoded or cut into words.
    length = len(text)
    if 4 * length > max_bytes and _size(text) > max_bytes:
        return False
    return (length + 1) // 2 <= max_words or _words(text) <= max_words


def _hard_cut(text: str, max_bytes: int) -> list[str]:
    pieces: list[str] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + max_bytes)
        while _size(text[start:end]) > max_bytes:
            end -= max(1, (end - start) // 8)
        pieces.append(text[start:end])
        start = end
    return pieces


def _atoms(text: str, max_words: int, max_bytes: int) -> list[str]:
    """Pieces of `text`, each within the limits, cut at the coarsest boundary that works."""
    splitters = (
        lambda s: _BLOCK_BOUNDARY.split(s),
        lambda s: s.splitlines(keepends=True),
        lambda s: _WORD_BOUNDARY.split(s),
    )

    def cut(piece: str, level: int) -> list[str]:
        if _fits(piece, max_words, max_bytes):
            return [piece]
        if level == len(splitters):
            return _hard_cut(piece, max_bytes)
        children = [c for c in splitters[level](piece) if c]
        if len(children) <= 1:
            return cut(piece, level + 1)
        return [atom for child in children for atom in cut(child, level + 1)]

    return cut(text, 0)


def split_note(text: str, max_words: int = MAX_SOURCE_WORDS, max_bytes: int = MAX_SOURCE_BYTES) -> list[str]:
    """The parts to upload for `text`: `[text]` when it fits, else greedily packed boundary-cut parts."""
    if _fits(text, max_words, max_bytes):
        return [text]
    return _gathered(_atoms(text, max_words, max_bytes), max_words, max_bytes)


def _gathered(pieces: Iterable[str], max_words: int, max_bytes: int, joint: str = "") -> list[str]:
    """`pieces` (each within the limits) gathered greedily, in order, into parts within the limits, the pieces of a
    part joined by `joint`."""
    parts: list[str] = []
    current: list[str] = []
    words = size = 0
    for piece in pieces:
        piece_words, piece_size = _words(piece), _size(piece) + _size(joint)
        if current and (words + piece_words > max_words or size + piece_size > max_bytes):
            parts.append(joint.join(current))
            current, words, size = [], 0, 0
        current.append(piece)
        words += piece_words
        size += piece_size
    if current:
        parts.append(joint.join(current))
    return parts


PACKABLE_SUFFIXES = vault_files.ATTACHMENT_KINDS["documents"]
"""The attachments whose text a packed notebook may hold in its packs: documents (PDF, Word, PowerPoint, EPUB, text,
CSV). Images, audio and video have no text to pack; a document with no text layer is never packed either."""

NO_TEXT = "no text to pack: it stays a file source"


def is_document(path: str) -> bool:
    """Whether `path` is an attachment whose text may go into packs (`PACKABLE_SUFFIXES`)."""
    return vault_files.is_attachment_path(path, PACKABLE_SUFFIXES)


def split_pages(document: DocumentText, max_words: int = MAX_SOURCE_WORDS,
                max_bytes: int = MAX_SOURCE_BYTES) -> list[str]:
    """The parts to upload for a document's text: its pages (slides, sections), each under its `[page N]` line,
    in runs that fit the limits, so that a part ends only where a page does; a single page over the limits is
    cut within itself (`split_note`). One part is the document's whole `marked_text`."""
    whole = document.marked_text
    if _fits(whole, max_words, max_bytes):
        return [whole]
    pages = ([f"[{document.unit} {n}]\n{page}" for n, page in enumerate(document.pages, start=1)]
             if document.unit else [whole])
    pieces = (piece for page in pages for piece in split_note(page, max_words, max_bytes - 2))
    return _gathered(pieces, max_words, max_bytes, "\n\n")


def prepare_document(path: str, document: DocumentText, max_words: int = MAX_SOURCE_WORDS,
                     max_bytes: int = MAX_SOURCE_BYTES) -> PreparedNote:
    """A document's text prepared as a note's is: split by page ranges (`split_pages`), hashed and titled."""
    texts = split_pages(document, max_words, max_bytes)
    return PreparedNote(path, tuple(PreparedPart(i, t, content_hash(t), path, len(texts))
                                    for i, t in enumerate(texts)))


class _Documents:
    """The documents of one `load_notes`, read through the state file's texts: a file whose bytes were read
    before is not read again (and one with its recorded modification time and size is not even hashed)."""

    def __init__(self, deps: SyncDeps, *, keep: bool = True) -> None:
        self.deps = deps
        self.keep = keep
        """Whether the texts read are kept in the state file (not in a dry run, which writes nothing)."""
        self.reader: DocumentReader | None = None

    def prepare(self, path: str) -> PreparedNote | NoteOutcome:
        """The document at `path` as a note of its text; an outcome when it has none (scanned, damaged,
        encrypted: it stays a file source, or says why it cannot be one) or cannot be read."""
        if self.reader is None:
            from nlmsync.documents import DocumentReader  # its reading process only for a run with documents

            self.reader = DocumentReader(DocumentTexts(self.deps.store.db.conn, keep=self.keep))
        try:
            document = self.reader.read(os.path.join(self.deps.vault_root, path), path)
        except OSError as exc:
            return NoteOutcome(path=path, branch=Branch.FAILED, error=f"{path}: cannot be read ({exc})")
        if not document.has_text or document.notice not in (None, TEXT_CUT):
            return NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=document.notice or NO_TEXT)
        return prepare_document(path, document, self.deps.max_words, self.deps.max_bytes)

    def close(self) -> None:
        if self.reader is not None:
            self.reader.close()


RACY_MTIME_NS = 2_000_000_000
"""A note modified this close to the moment it is read gets no `note_hashes` record: a later write within
the same timestamp tick (2 s on FAT, 1 s on HFS+, milliseconds elsewhere) could leave its mtime and size
as they were."""


READING_STEP = 64
"""`load_notes` says how far it got (`SyncDeps.reading`) every this many notes, and when done."""


@dataclass(frozen=True)
class PreparedPart:
    """One source to upload: part `index` of the `part_count` parts of the note at `path`, the exact text, its
    xxh3-128 hash and its deterministic title. `text` is None for a note recognised unchanged by its file's stat
    and not read (`known_note`): such a part has no title until it is read."""

    index: int
    text: str | None
    content_hash: str
    path: str
    part_count: int = 1

    @cached_property
    def title(self) -> str:
        """The source's title, by the hash of its words (made when first asked for: a note that goes into a pack
        needs none).

        Raises:
            RuntimeError: the part was not read (a caller's mistake: only a note read is uploaded or adopted).
        """
        if self.text is None:
            raise RuntimeError(f"{self.path}: a note that was not read has no title")
        return source_title(self.path, title_hash(self.text), self.index, self.part_count)

    @property
    def legacy_title(self) -> str:
        """The title earlier versions of nlmsync gave this text (by the hash of its exact bytes)."""
        return source_title(self.path, self.content_hash, self.index, self.part_count)

    def titles(self) -> tuple[str, str]:
        """The titles this very text may be listed under: nlmsync's, and the one earlier versions gave it."""
        return self.title, self.legacy_title


@dataclass(frozen=True)
class PreparedNote:
    path: str
    parts: tuple[PreparedPart, ...]

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(p.content_hash for p in self.parts)

    @property
    def is_read(self) -> bool:
        """Whether the parts carry their text (a note only `known_note` does not)."""
        return all(p.text is not None for p in self.parts)


def prepare_note(path: str, text: str, max_words: int = MAX_SOURCE_WORDS,
                 max_bytes: int = MAX_SOURCE_BYTES) -> PreparedNote:
    """Split (if needed), hash and title the text of the note at `path`."""
    texts = split_note(text, max_words, max_bytes)
    hashes = [content_hash(t) for t in texts]
    return PreparedNote(path, tuple(
        PreparedPart(i, t, h, path, len(texts)) for i, (t, h) in enumerate(zip(texts, hashes))
    ))


def known_note(path: str, hashes: Sequence[str]) -> PreparedNote:
    """The note at `path` as its part hashes (recorded when it was last read) make it: hashes and titles,
    without the text. Enough to decide its branch; a note that is to be uploaded has to be read."""
    return PreparedNote(path, tuple(PreparedPart(i, None, h, path, len(hashes)) for i, h in enumerate(hashes)))


def split_limits(deps: SyncDeps) -> str:
    """The split limits as a `NoteHashes.split`: hashes made with other limits are not this run's."""
    return split_key(deps.max_words, deps.max_bytes)


def load_notes(deps: SyncDeps, paths: Sequence[str], found: Collection[str] = (),
               known: Mapping[str, NoteHashes] | None = None,
               read: list[NoteHashes] | None = None,
               stats: Mapping[str, tuple[int, int]] | None = None, *,
               dry_run: bool = False) -> list[PreparedNote | NoteOutcome]:
    """Read and prepare each path; excluded notes become excluded outcomes.

    A note an `exclude` pattern matches is excluded by it first, unread, whatever else it is (empty, binary,
    named): the pattern is what keeps it out, and an `--all` run takes out its source. The rest is the
    admission rule every reader of notes shares (`text.admit_note`): an unreadable note (binary, invalid UTF-8)
    fails when the user named it, and is excluded with the reason when it was only `found` by walking the vault —
    as the index skips it — so one stray file cannot fail every `--all` run; an empty note (white space only) is
    excluded as `empty`, one whose front matter says `nlmsync: false` as such.

    A document (`is_document`: a path given here only when its text goes into a pack) is its text by pages
    (`prepare_document`), from the state file's texts when its bytes were read before; one with no text to pack
    is excluded with why.

    A path whose file has the mtime and size of its `known` record is not read: its note is the recorded
    hashes (`known_note`; front matter cannot have changed). A `dry_run` reads documents' texts from the state
    file and keeps none there.
    Each note read is appended to `read` as a record to keep, unless it was modified too recently to
    trust its mtime (`RACY_MTIME_NS`). A path of `stats` is taken to have the (mtime, size) given there (a walk
    of the vault just found its file so) rather than stat'ed again.
    """
    items: list[PreparedNote | NoteOutcome] = []
    split = split_limits(deps)
    patterns = deps.settings.exclude
    trusted_before = time.time_ns() - RACY_MTIME_NS
    documents = _Documents(deps, keep=not dry_run)
    try:
        for done, path in enumerate(paths):
            if done % READING_STEP == 0:
                deps.reading(done, len(paths))
            if vault_files.excluded_by_pattern(deps.vault_root, path, patterns):  # whatever else it is: kept out
                items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=vault_files.EXCLUDED_BY_PATTERN))
                continue
            st = stats.get(path) if stats else None
            if st is None:
                try:
                    found_stat = os.stat(os.path.join(deps.vault_root, path))
                    st = found_stat.st_mtime_ns, found_stat.st_size
                except (OSError, ValueError):
                    st = None
            record = known.get(path) if known and st is not None else None
            if record is not None and st is not None and record.holds_for(st[0], st[1], split):
                items.append(known_note(path, record.hashes))
                continue
            if is_document(path):  # a packed document: its text, read once per content hash
                document = documents.prepare(path)
                items.append(document)
                if isinstance(document, PreparedNote) and read is not None and st is not None \
                        and st[0] < trusted_before:
                    read.append(NoteHashes(path, st[0], st[1], split, document.hashes))
                continue
            walked = path in found and stats is not None and path in stats  # a walk of the vault just found it
            try:
                admission = admit_note(deps.vault_root, path, (), size=st[1] if walked and st is not None else 0,
                                       fs_path=os.path.join(deps.vault_root, path) if walked else None)
            except InputError as exc:  # a named path that leaves the vault
                items.append(NoteOutcome(path=path, branch=Branch.FAILED, error=str(exc)))
                continue
            if admission.refused is not None:
                items.append(_refused(deps, path, admission, named=path not in found))
                continue
            text = admission.text
            note = prepare_note(path, text, deps.max_words, deps.max_bytes)
            items.append(note)
            if read is not None and st is not None and st[0] < trusted_before:
                read.append(NoteHashes(path, st[0], st[1], split, note.hashes))
    finally:
        documents.close()
    deps.reading(len(paths), len(paths))
    return items


def _refused(deps: SyncDeps, path: str, admission: Admission, *, named: bool) -> NoteOutcome:
    """The outcome of a note the admission rule refused: excluded (empty, `nlmsync: false`, or only found by
    walking the vault, as the index skips it), or — a note the user named that cannot be read — failed."""
    reason = admission.refused or ""
    if not named or reason in ("empty", vault_files.EXCLUDED_BY_FRONT_MATTER):
        return NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=reason)
    if not admission.read:  # not there, a folder, no permission: said as reading it says it
        try:
            vault_files.read_note_text(deps.vault_root, path)
        except InputError as exc:
            return NoteOutcome(path=path, branch=Branch.FAILED, error=str(exc))
    return NoteOutcome(path=path, branch=Branch.FAILED, error=str(UnreadableNoteError(path, reason)))
