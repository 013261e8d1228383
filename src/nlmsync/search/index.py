"""The note index: the vault kept searchable incrementally, persisted in the state file.

Dirty model: `mark_path_modified`, `mark_path_deleted`, `mark_full_rescan_needed` record what
the next sync must do (`_Pending`); where the index is — new, answered cold, loaded — is `_Phase`. The
first sync of a process hydrates from the cache and does a full rescan, which compares each
note's `mtime_ns` and `size` with the cached row, so unchanged notes are neither read nor
tokenized and changes made while nothing ran are found. Later syncs are path-level
incremental, except every `full_rescan_every`-th dirty sync, which is a full rescan again.
`search()` syncs first when dirty. One lock serializes syncs and queries, so any number
of threads may call `search()` at once.

`NoteIndex` holds the state every method reads or changes under that lock; what stands apart: what it knows of
each note besides its terms (`indexed_notes`), a note's terms (`doc_terms`, `staged_terms`), the postings
(`postings`), ranking (`scoring`, `ranking`), the cold answer (`cold`) and the cache's format and readers
(`store.index_codec`, `cache_read`).
"""

from __future__ import annotations

import enum
import functools
import json
import sqlite3
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync.config import IndexSettings
from nlmsync.search.bm25 import Weights
from nlmsync.search.doc_terms import DocBatch, DocTerms
from nlmsync.search.hits import Evidence, SearchHit
from nlmsync.search.indexed_notes import Changes, IndexedNotes, stat_marked
from nlmsync.search.query import STOP_WORDS, coverage_terms, query_weights, query_words
from nlmsync.search.tokenize import TOKENIZER_VERSION
from nlmsync.store import index_codec
from nlmsync.store.index_codec import CachedDoc, NoteFacts, Snapshot
from nlmsync.text import admit_note, attachment_links, link_matches
from nlmsync.vault import (
    EXCLUDED_BY_PATTERN,
    NoteFile,
    SkippedNote,
    VaultListing,
    attachment_suffixes,
    excluded_by_pattern,
    has_note_suffix,
    is_note_path,
    list_vault,
    normalize_rel_path,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from sqlite_utils import Database

    from nlmsync.config import SearchSettings, Settings
    from nlmsync.documents import DocumentReader
    from nlmsync.search.cache_read import CacheRead
    from nlmsync.search.markdown import NoteFields, NoteText
    from nlmsync.search.postings import PostingsIndex
    from nlmsync.search.ranking import Ranking
    from nlmsync.search.selection import Selection
    from nlmsync.search.word_forms import WordForms
    from nlmsync.store.document_texts import DocumentTexts

CACHE_FORMAT = 3
MERGE_THRESHOLD = 512


@functools.cache
def _markdown_fields() -> tuple[Callable[..., NoteFields], Callable[..., NoteText | None],
                               Callable[..., NoteFacts]]:
    """`markdown.note_fields`, `markdown.whole_fields` and `note_facts.note_facts`, imported on first use: a
    process whose vault did not change reads no note and never needs markdown nor the language model (and a full
    build runs no import statement per note)."""
    from nlmsync.search.markdown import note_fields, whole_fields
    from nlmsync.search.note_facts import note_facts

    return note_fields, whole_fields, note_facts


def _tell_every(reading: int) -> int:
    """Of the `reading` notes a sync may read, one in how many is told by the language model as it is read: every
    one when they are too few for their folders to say the language of the rest (`note_facts.presumed_languages`)."""
    from nlmsync.search.note_facts import MIN_TOLD, TELL_EVERY

    return 1 if reading < TELL_EVERY * MIN_TOLD else TELL_EVERY


def _word_forms(query: str, language: str) -> WordForms | None:
    """The question's words whose other forms are searched too, in `language` (None: it has no stemmer)."""
    from nlmsync.search.word_forms import STEMMERS, WordForms

    if language not in STEMMERS:
        return None
    words = [word for word in dict.fromkeys(query_words(query)) if word not in STOP_WORDS and word.isalpha()]
    return WordForms(language, words) if words else None


@dataclass
class IndexReport:
    """What one sync did. `indexed` counts the notes searchable afterwards."""

    indexed: int = 0
    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    skipped: list[SkippedNote] = field(default_factory=list)
    full_rescan: bool = False
    seconds: float = 0.0
    notices: list[SkippedNote] = field(default_factory=list)
    """The attachments read by this sync whose text is missing or partial, and why (they are indexed all the
    same, by their file name)."""

    def as_dict(self) -> dict[str, object]:
        return {"indexed_count": self.indexed, "added_count": self.added, "updated_count": self.updated,
                "removed_count": self.removed, "unchanged_count": self.unchanged, "full_rescan": self.full_rescan,
                "seconds": round(self.seconds, 4),
                "skipped_notes": [{"path": s.path, "reason": s.reason} for s in self.skipped],
                "attachment_notices": [{"path": s.path, "notice": s.reason} for s in self.notices]}


class _Phase(enum.Enum):
    """Where a `NoteIndex` is between its creation and having the index in memory."""

    NEW = enum.auto()  # nothing read: the first query may be answered cold (`_answer_cold`)
    ANSWERED_COLD = enum.auto()  # the first query was tried cold: the next query loads the index
    LOADED = enum.auto()  # the index is in memory (`_hydrate_walking`), whatever the first sync did after


class _Pending:
    """What the next sync must do (the dirty model): a full rescan, or the paths marked since the last sync.

    `walk` is a walk of the vault the full rescan may compare instead of walking again (the cold answer's);
    a mark says the vault changed after it, so every mark drops it: compared, it would show the marked notes
    as they were, and the sync would clear their marks."""

    __slots__ = ("deleted", "full_rescan", "modified", "walk")

    def __init__(self, full_rescan: bool) -> None:
        self.full_rescan = full_rescan
        self.modified: set[str] = set()
        self.deleted: set[str] = set()
        self.walk: VaultListing | None = None

    def __bool__(self) -> bool:
        return self.full_rescan or bool(self.modified or self.deleted)

    def path_modified(self, rel: str) -> None:
        self.deleted.discard(rel)
        self.modified.add(rel)
        self.walk = None

    def path_deleted(self, rel: str) -> None:
        self.modified.discard(rel)
        self.deleted.add(rel)
        self.walk = None

    def everything(self) -> None:
        self.full_rescan = True
        self.walk = None


class _Links:
    """The notes' links to attachments as one sync reads them (`note_read`), kept in the state file, and the
    attachments with no text that must be indexed again because the words linking to them changed."""

    def __init__(self, texts: DocumentTexts) -> None:
        self.texts = texts
        self.linking = texts.linking_notes()
        self.touched: set[str] = set()
        self.waiting: set[str] = set()
        """The attachments with no text this sync read, to be indexed once every note's links are read."""

    def note_read(self, note: str, links: dict[str, str]) -> None:
        if links or note in self.linking:
            self.touched |= self.texts.set_links(note, links)

    def textless_to_index(self, gone_notes: list[str]) -> list[str]:
        """The attachments with no text to index by the words linking to them: those this sync read, and those a
        link that changed reaches (`gone_notes` left the index), in path order."""
        self.touched |= self.texts.forget_links(note for note in gone_notes if note in self.linking)
        reached = set(self.waiting)
        if self.touched:
            reached.update(path for path in self.texts.textless()
                           if any(link_matches(target, path) for target in self.touched))
        return sorted(reached)


class NoteIndex:
    """Field-weighted BM25 over the notes of one vault, optionally cached in a state database."""

    def __init__(self, vault_root: Path, db: Database | sqlite3.Connection | None = None,
                 settings: Settings | SearchSettings | IndexSettings | None = None) -> None:
        """`db` is the state file (`store.db.open_connection`, or `open_database`'s sqlite-utils
        `Database`), None for an index kept only in memory; `settings` default to `IndexSettings()`."""
        self.vault_root = Path(vault_root)
        self.db = db
        self.settings = settings if settings is not None else IndexSettings()
        self.weights = Weights(self.settings.weight_body, self.settings.weight_heading, self.settings.weight_path,
                               self.settings.weight_folder)
        self.attachments = attachment_suffixes(self.settings.attachments)
        """The extensions of the files besides notes the index holds (the `attachments` setting's kinds)."""
        self._postings: PostingsIndex  # made by the first sync (`_hydrate_walking`): numpy is imported then
        self._ranker: Ranking | None = None
        self._lock = threading.RLock()
        self._notes = IndexedNotes()
        self._phase = _Phase.NEW
        self._pending = _Pending(full_rescan=True)  # the first sync compares the whole vault with the cache
        self._incremental_syncs = 0
        self._facts: dict[int, NoteFacts] = {}  # each indexed note's by `index_codec.path_key`, once loaded
        self._languages: dict[str, int] | None = None  # notes per language, counted from `_facts` when asked
        self._rewrite_cache = False
        self.save_error: sqlite3.Error | None = None
        """Why the last sync could not save the index in the state file (None: saved, or nothing to save). The
        index still answers from memory and saves itself whole on the next sync."""
        self.notes_read = 0
        self.documents_read = 0
        """Attachments whose text was read (not found in the state file's texts) by this index's syncs."""
        self._reader: DocumentReader | None = None
        self._notices: list[SkippedNote] = []
        self._links: _Links | None = None

    # --- dirty model ---

    def mark_path_modified(self, path: str) -> None:
        rel = normalize_rel_path(path)
        with self._lock:
            self._pending.path_modified(rel)

    def mark_path_deleted(self, path: str) -> None:
        rel = normalize_rel_path(path)
        with self._lock:
            self._pending.path_deleted(rel)

    def mark_full_rescan_needed(self) -> None:
        with self._lock:
            self._pending.everything()

    @property
    def loaded(self) -> bool:
        """Whether the index is in memory: False until the first sync (a cold answer loads nothing)."""
        return self._phase is _Phase.LOADED

    @property
    def dirty(self) -> bool:
        return self._phase is not _Phase.LOADED or bool(self._pending)

    # --- queries ---

    def search(self, query: str, limit: int | None = None,
               on_progress: Callable[[int, int], None] | None = None,
               evidence: Evidence | None = None, language: str | None = None) -> list[SearchHit]:
        """Notes ranked for `query` (`scoring.hits`' order), syncing first when dirty (`on_progress` as `sync`'s);
        `evidence`, if given, receives what the ranking found of the query's terms. With a `language` (a
        question's, as `selection` searches), the query's words are also searched in their other forms in it
        (`word_forms`); without, the words as written only.

        A process's first query on a vault that did not change since the index was saved is answered from
        the state file without loading the index (`_answer_cold`)."""
        terms = query_weights(query, stop_words=self.settings.query_stop_words)
        common = STOP_WORDS if self.settings.query_stop_words else frozenset()
        with self._lock:
            forms = _word_forms(query, language) if language else None
            if self._phase is _Phase.NEW and self.db is not None:
                hits = self._answer_cold(terms, limit, common, evidence, forms)
                if hits is not None:
                    return hits
            if self.dirty:
                self.sync(on_progress)
            return self._ranking().rank(terms, limit, common, evidence, forms)

    def question_language(self, query: str) -> str:
        """The language `query` is in, of those the vault's notes are written in (`text.question_language`): in a
        vault of one language, that one, told without the language model."""
        told = [lang for lang, count in self.languages().items() if lang and count > 1]
        if len(told) <= 1:
            return told[0] if told else ""
        from nlmsync.text import question_language

        return question_language(query, told)

    def selection(self, query: str, on_progress: Callable[[int, int], None] | None = None,
                  limit: int = 0) -> Selection:
        """The hits of `query` (at least `limit`) and what the selection rule (`search.selection`) makes of them:
        the notes it selects, and whether nothing matches the query well."""
        from nlmsync.search.selection import CANDIDATES_PER_NOTE, select_notes

        s = self.settings
        evidence = Evidence()
        if self.dirty and (self._phase is not _Phase.NEW or self.db is None or not self.languages()):
            self.sync(on_progress)  # the vault's languages are known once the index is (a cold answer's: saved)
        language = self.question_language(query)
        hits = self.search(query, limit=max(limit, s.top_n * CANDIDATES_PER_NOTE), on_progress=on_progress,
                           evidence=evidence, language=language)
        facts = self.facts([hit.path for hit in hits])
        languages = self.languages()
        # the rule's candidates are the notes and the attachments alike: a refresh makes either a source
        return select_notes(hits, facts, languages, language, evidence,
                            coverage_terms(query, stop_words=s.query_stop_words, language=language), top_n=s.top_n,
                            cutoff_ratio=s.cutoff_ratio, min_k=s.min_k)

    def selected(self, query: str, on_progress: Callable[[int, int], None] | None = None) -> list[SearchHit]:
        """The notes the selection rule picks for `query` (none when nothing matches it well)."""
        return self.selection(query, on_progress).chosen

    def facts(self, paths: list[str]) -> dict[str, NoteFacts]:
        """The facts (language, the keys its copies share) of those of `paths` that are indexed: from the index in
        memory, or, before it is loaded, from the state file."""
        with self._lock:
            if self._phase is not _Phase.LOADED and self.db is not None:
                try:
                    return index_codec.facts_of(self.db, paths)
                except sqlite3.Error:
                    return {}
            found = {path: self._facts.get(key) for path, key in zip(paths, index_codec.path_keys(paths))}
            return {path: fact for path, fact in found.items() if fact is not None}

    def languages(self) -> dict[str, int]:
        """How many indexed notes each language has."""
        with self._lock:
            if self._phase is not _Phase.LOADED and self.db is not None:
                try:
                    return index_codec.load_languages(self.db)
                except sqlite3.Error:
                    return {}
            if self._languages is None:
                self._languages = dict(Counter(fact.lang for fact in self._facts.values()))
            return self._languages

    def paths(self) -> list[str]:
        with self._lock:
            if self.dirty:
                self.sync()
            return self._postings.paths()

    def skipped(self) -> list[SkippedNote]:
        with self._lock:
            return sorted((SkippedNote(p, d.skip_reason or "") for p, d in self._notes.skipped.items()),
                          key=lambda s: s.path)

    # --- sync on query ---

    def sync(self, on_progress: Callable[[int, int], None] | None = None) -> IndexReport:
        """Bring the index up to date with the vault and persist what changed.

        `on_progress(done, total)` is called as a full rescan reads the notes that changed: once before the
        first (0, total), after each, and last with (total, total) before the index is merged and saved."""
        started = time.perf_counter()
        with self._lock:
            pending = self._pending
            listing = None
            if self._phase is not _Phase.LOADED:
                listing = self._hydrate_walking(pending.walk)
            full = pending.full_rescan or self._incremental_syncs >= self.settings.full_rescan_every
            self._start_links()
            if full:
                changes = self._rescan_all(listing, on_progress)
                self._incremental_syncs = 0
            else:
                changes = self._rescan_paths(pending.deleted, pending.modified)
                self._incremental_syncs += 1
            self._pending = _Pending(full_rescan=False)
            self._finish_attachments(changes, full)
            self._settle_languages(changes)
            facts = self._keep_facts(changes)
            merged = self._postings.apply(changes.removed, changes.batch)
            self._persist(changes, merged, facts)
            indexed, added = len(self._postings), len(changes.batch) - changes.updated
            notices, self._notices = self._notices, []
            # every note indexed is added, updated or unchanged; a skipped note is none of them
            return IndexReport(indexed=indexed, added=added, updated=changes.updated, removed=len(changes.removed),
                               unchanged=indexed - added - changes.updated, skipped=self.skipped(), full_rescan=full,
                               seconds=time.perf_counter() - started, notices=notices)

    def _rescan_all(self, listing: VaultListing | None = None,
                    on_progress: Callable[[int, int], None] | None = None) -> Changes:
        """Walk the whole vault (unless `listing` is a walk just made); read only the notes whose
        (mtime_ns, size) differ from what was indexed.

        For a vault of tens of thousands of notes this is most of a fresh process's first search, so
        the notes are compared whole (numpy against the snapshot, or dict against dict), and only what
        changed gets a Python loop."""
        if listing is None:
            listing = list_vault(self.vault_root, self.attachments)
        changes = Changes(DocBatch(MERGE_THRESHOLD, self.weights))
        candidates, gone = self._notes.changed(listing, self._postings.slot_of, self._postings.alive)
        changes.tell_every = _tell_every(len(candidates))
        for path in gone:
            changes.removed.append(path)
            del self._notes.stats[path]
        self._notes.drop_unlisted_skips(listing, changes)
        total = len(candidates)
        if on_progress is not None:
            on_progress(0, total)
        # in the walk's order: a full build's snapshot holds the notes as a walk of the unchanged vault lists them,
        # which a fresh process's first query then compares as a whole (`SnapshotParts.holds_exactly`)
        notes = [listing.note(i) for i in sorted(candidates)]
        self._expect_attachments([note for note in notes if self._notes.differs(note)])
        for done, note in enumerate(notes, start=1):
            if self._notes.differs(note):
                self._load(note, changes)
            if on_progress is not None:
                on_progress(done, total)
        for skip in listing.skipped:
            self._notes.skip(CachedDoc.skipped(skip.path, 0, 0, skip.reason), changes)
        return changes

    def _rescan_paths(self, deleted: set[str], modified: set[str]) -> Changes:
        changes = Changes(DocBatch(MERGE_THRESHOLD, self.weights))
        changes.tell_every = _tell_every(len(modified))
        for path in sorted(deleted):
            self._notes.gone(path, changes)
        for path in sorted(modified):
            note = stat_marked(self.vault_root, path, self.attachments)
            if isinstance(note, NoteFile):
                self._load(note, changes)
            elif note is None:
                self._notes.gone(path, changes)
            else:
                self._notes.skip(note, changes)
        return changes

    def _load(self, note: NoteFile, changes: Changes) -> None:
        """Read, check and tokenize one note (or attachment) into `changes` (as an addition or a skip)."""
        # a walk's or a marked path's note is a note or an attachment outside the ignored folders: its suffix tells
        if not has_note_suffix(note.path):
            self._load_attachment(note, changes)
            return
        note_fields, whole_fields, note_facts = _markdown_fields()
        admission = admit_note(self.vault_root, note.path, self.settings.exclude, fs_path=note.fs_path, size=note.size,
                               with_front=True)
        self.notes_read += admission.read
        if admission.refused is not None:
            self._notes.skip(CachedDoc.skipped(note.path, note.mtime_ns, note.size, admission.refused), changes)
            return
        self._notes.indexed(note, changes)
        text, front = admission.text, admission.front
        if self._links is not None:
            self._links.note_read(note.path, attachment_links(text, note.path, self.attachments))
        assert front is not None  # read, as asked
        tell = len(changes.facts) % changes.tell_every == 0
        changes.facts[note.path] = note_facts(text, front, tell)
        if not tell:
            changes.untold.append(note.path)
        whole = whole_fields(text, front)
        if whole is not None:
            changes.batch.add_text(note.path, whole)
        else:
            changes.batch.add_counts(note.path, note_fields(note.path, text, front))

    def _load_attachment(self, attachment: NoteFile, changes: Changes) -> None:
        """Index one attachment by its file name and its text, read once per content (`documents.DocumentReader`,
        its texts kept in the state file by the hash of the bytes). One with no text to read, or whose text cannot
        be read, is indexed by its file name, and the reason is among the sync's notices."""
        from nlmsync.search.markdown import NoteText

        if excluded_by_pattern(self.vault_root, attachment.path, self.settings.exclude):
            self._notes.skip(CachedDoc.skipped(attachment.path, attachment.mtime_ns, attachment.size,
                                               EXCLUDED_BY_PATTERN), changes)
            return
        try:
            document = self._documents().read(attachment.fs_path or self.vault_root / attachment.path,
                                              attachment.path)
        except OSError as exc:
            self._notes.skip(CachedDoc.skipped(attachment.path, attachment.mtime_ns, attachment.size,
                                               f"unreadable ({exc.strerror})"), changes)
            return
        if document.notice is not None:
            self._notices.append(SkippedNote(attachment.path, document.notice))
        self._notes.indexed(attachment, changes)
        if not document.has_text and self._links is not None:
            self._links.waiting.add(attachment.path)  # indexed once the sync has read every note's links
            return
        changes.batch.add_text(attachment.path, NoteText(heading="", body=document.text))

    def _expect_attachments(self, notes: list[NoteFile]) -> None:
        """Announce the attachments among `notes` that the sync will read, in order, so the reading process reads
        the next ones while this one indexes the last."""
        wanted = [(a.fs_path or self.vault_root / a.path, a.path) for a in notes if not has_note_suffix(a.path)
                  and not excluded_by_pattern(self.vault_root, a.path, self.settings.exclude)]
        if wanted:
            self._documents().expect(wanted)

    def _documents(self) -> DocumentReader:
        """The reader of this sync's attachments (its reading process is started with the first file to read)."""
        if self._reader is None:
            from nlmsync.documents import DocumentReader

            cache = None
            if self.db is not None:
                from nlmsync.store.document_texts import DocumentTexts

                cache = DocumentTexts(self.db)
            self._reader = DocumentReader(cache)
        return self._reader

    def _start_links(self) -> None:
        """Keep track of the notes' links to attachments in this sync (with a state file and attachments only)."""
        self._links = None
        if self.db is not None and self.attachments:
            from nlmsync.store.document_texts import DocumentTexts

            self._links = _Links(DocumentTexts(self.db))

    def _finish_attachments(self, changes: Changes, full: bool) -> None:
        """Index again the attachments with no text whose linking notes' words changed in this sync (read from the
        state file: no file is read), end the sync's reading process, forget the attachments that left the index,
        and after a full rescan the texts no attachment of the vault has any more."""
        links, self._links = self._links, None
        if links is not None:
            from nlmsync.search.markdown import NoteText

            gone = [path for path in [*changes.removed, *changes.skipped] if is_note_path(path)]
            for path in links.textless_to_index(gone):
                stat = self._notes.stats.get(path)
                if stat is not None:
                    if path not in links.waiting:  # indexed before: its words change
                        self._notes.indexed(NoteFile(path, *stat), changes)
                    changes.batch.add_text(path, NoteText(heading="", body=links.texts.link_words(path)))
        reader, self._reader = self._reader, None
        if reader is not None:
            self.documents_read += reader.files_read
            reader.close()
        if links is None:
            return
        try:
            gone = [path for path in [*changes.removed, *changes.skipped] if not is_note_path(path)]
            if gone:
                links.texts.forget(gone)
            if full and (gone or reader is not None):
                links.texts.prune()
        except sqlite3.Error:
            pass  # the texts are a cache: kept a while longer, they cost only room

    def _settle_languages(self, changes: Changes) -> None:
        """The languages of the notes read but not told: presumed from their folders' (`note_facts.presumed_languages`),
        or told, their text read again, where their folders do not say or an edited note was indexed before in
        another language than its folder's (a German note in an English folder stays told, not presumed English)."""
        if not changes.untold:
            return
        from nlmsync.search.note_facts import facts_of, presumed_languages
        from nlmsync.text import text_language

        # an untold note's language is "" until settled: it is no evidence, nor is a note told to have none
        told = {path: fact.lang for path, fact in changes.facts.items() if fact is not None and fact.lang}
        presumed = presumed_languages(changes.untold, told)
        before = (self._facts.get(key) for key in index_codec.path_keys(changes.untold))
        for path, was in zip(changes.untold, before):
            fact = changes.facts[path]
            assert fact is not None
            lang = presumed.get(path)
            if lang is not None and was is not None and was.lang != lang:
                lang = None
            if lang is None:
                admission = admit_note(self.vault_root, path, self.settings.exclude)
                lang = text_language(admission.text) if admission.refused is None else ""
            changes.facts[path] = facts_of(lang, fact.pages)
        changes.untold.clear()

    def _keep_facts(self, changes: Changes) -> dict[int, NoteFacts | None]:
        """The facts of the notes a sync read or removed, by `index_codec.path_key`, now the index's."""
        for path in changes.removed:
            changes.facts.setdefault(path, None)
        facts = dict(zip(index_codec.path_keys(changes.facts), changes.facts.values()))
        for key, fact in facts.items():
            if fact is None:
                self._facts.pop(key, None)
            else:
                self._facts[key] = fact
        if facts:
            self._languages = None
        return facts

    # --- the cache in the state file ---

    def _signature(self) -> str:
        s = self.settings
        return json.dumps({"format": CACHE_FORMAT, "tokenizer": TOKENIZER_VERSION,
                           "weights": [s.weight_body, s.weight_heading, s.weight_path, s.weight_folder],
                           "exclude": sorted(s.exclude), "attachments": sorted(s.attachments)}, sort_keys=True)

    def _answer_cold(self, terms: dict[str, float], limit: int | None,
                     common: frozenset[str], evidence: Evidence | None,
                     forms: WordForms | None) -> list[SearchHit] | None:
        """The first query's hits straight from the state file (`search.cold`), or None when the vault changed
        since the index was saved, or the cache cannot answer: the caller then syncs.

        The walk it checked is kept for the first sync, which compares it with the index it loads instead of
        walking again, unless a mark says the vault changed after it (`_Pending`).
        """
        self._phase = _Phase.ANSWERED_COLD
        if self.db is None:
            return None
        conn = self.db if isinstance(self.db, sqlite3.Connection) else self.db.conn
        if conn.in_transaction:
            return None
        from nlmsync.search.bm25 import Params
        from nlmsync.search.cold import answer_from_file

        try:
            if index_codec.load_signature(conn) != self._signature():
                return None
        except sqlite3.Error:
            return None
        walk = self._pending.walk = list_vault(self.vault_root, self.attachments)
        s = self.settings
        return answer_from_file(conn, walk, terms, limit, common, Params(self.weights, s.k1, s.b), evidence, forms)

    def _hydrate_walking(self, walk: VaultListing | None) -> VaultListing:
        """Load the cache (the first sync of a process) and walk the vault meanwhile, unless `walk` is one
        still good: the cache is read in a background thread where it can be (`cache_read.start_read`), the
        walk is returned for the full rescan that follows. An unreadable cache is rebuilt from the vault, and
        written whole when possible.

        Raises:
            InputError: the vault is not a readable folder (the cache is loaded all the same).
        """
        reading = None
        self._postings = self._new_postings()
        try:
            reading = self._start_hydrate()
        except sqlite3.Error:
            self._forget_cache()
        try:
            return walk if walk is not None else list_vault(self.vault_root, self.attachments)
        finally:
            if reading is not None:
                try:
                    self._hydrate(*reading.result())
                except sqlite3.Error:
                    self._forget_cache()
            self._phase = _Phase.LOADED

    def _new_postings(self) -> PostingsIndex:
        from nlmsync.search.postings import PostingsIndex  # numpy: not for a cold answer

        return PostingsIndex(self.weights, self.settings.k1, self.settings.b, merge_threshold=MERGE_THRESHOLD)

    def _ranking(self) -> Ranking:
        """The ranking of the postings index in use (a new one, with an empty cache, for a new index)."""
        if self._ranker is None or self._ranker.index is not self._postings:
            from nlmsync.search.ranking import Ranking

            self._ranker = Ranking(self._postings)
        return self._ranker

    def _forget_cache(self) -> None:
        self._postings = self._new_postings()
        self._notes.clear()
        self._facts = {}
        self._languages = None
        self._rewrite_cache = True

    def _start_hydrate(self) -> CacheRead | None:
        """Start reading a cache built with these settings; clear one built otherwise (None: nothing to load)."""
        if self.db is None:
            return None
        signature = self._signature()
        if index_codec.load_signature(self.db) != signature:
            index_codec.clear(self.db, signature)
            return None
        from nlmsync.search.cache_read import start_read

        return start_read(self.db)

    def _hydrate(self, rows: list[CachedDoc], snapshot: Snapshot | None, facts: dict[int, NoteFacts]) -> None:
        self._facts = facts
        self._languages = None
        if snapshot is not None:
            postings = self._postings
            postings.load_base(snapshot.terms,  # type: ignore[arg-type]  # a loaded snapshot's is a Vocabulary
                               snapshot.offsets, snapshot.slots, snapshot.tf_codes, snapshot.tf_values,
                               snapshot.paths, snapshot.lengths)
            for row in rows:  # a row hides the snapshot's entry for its path
                postings.remove(row.path)
            self._notes.load_base(list(postings.base_paths), snapshot.mtimes, snapshot.sizes)
        for row in rows:
            if row.kind == index_codec.SKIPPED:
                self._notes.skipped[row.path] = row
            elif row.kind == index_codec.INDEXED and row.terms:  # empty or unreadable terms: re-read the note
                self._postings.add(DocTerms(row.path, row.terms, row.lengths))
                self._notes.load_row(row)

    def _persist(self, changes: Changes, merged: bool, facts: dict[int, NoteFacts | None]) -> None:
        if self.db is None:
            return
        try:
            if merged or self._rewrite_cache:
                import numpy as np

                if not merged:
                    self._postings.merge()
                p = self._postings
                stats = [self._notes.stats[path] for path in p.base_paths]  # type: ignore[index]
                snapshot = Snapshot(p.base_paths, np.array([m for m, _ in stats], dtype=np.int64),
                                    np.array([size for _, size in stats], dtype=np.int64), p.base_lengths,
                                    p.terms, p.offsets, p.slots, p.tf_codes, p.tf_values)  # type: ignore[arg-type]
                index_codec.write_snapshot(self.db, snapshot, self._notes.skipped.values(), self._signature(),
                                           self._facts, self.languages())
            else:
                rows = [CachedDoc.deleted(path) for path in changes.removed]
                rows.extend(changes.skipped.values())
                for doc in changes.batch.docs:
                    mtime_ns, size = self._notes.stats[doc.path]
                    rows.append(CachedDoc(doc.path, mtime_ns, size, None, doc.lengths, doc.tf))
                if rows or facts:
                    index_codec.write_changes(self.db, rows, facts, self.languages())
            self._rewrite_cache = False
            self.save_error = None
        except sqlite3.Error as exc:
            # The cache is only a cache: keep serving from memory and rewrite it whole next time; whoever
            # promised to save it (`nlmsync index`) reads `save_error`.
            self._rewrite_cache = True
            self.save_error = exc
