"""The first half of source preparation for a run's notes, before any call that changes the notebook: read and hash each
note (`load_notes`), load its source mappings and resolve their alias chains once for the run
(`RegistryView`), refuse up front what cannot fit (`check_capacity_up_front`) and decide each note's
one branch (`decide_all`, through the pure `plan.decide_branch`).

A note whose file has the modification time and size recorded when it was last read (`note_hashes` in the
state file) is not read again: its recorded part hashes decide its branch, and it is read only if it has to
be uploaded (`read_for_upload`). An idle run costs a `stat` per note, not a read and a hash.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync import vault as vault_files
from nlmsync.errors import CapacityError, InputError, UnreadableNoteError
from nlmsync.store import NoteHashes
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.eviction import CAPACITY_HINT
from nlmsync.sync.plan import (
    Branch,
    Decision,
    PreparedNote,
    ResolvedMapping,
    decide_branch,
    known_note,
    prepare_note,
)
from nlmsync.sync.reconcile import RemoteView
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.split import split_key
from nlmsync.sync.titles import retitled
from nlmsync.text import Admission, admit_note

if TYPE_CHECKING:
    from nlmsync.store import SourceMapping, StateStore

RACY_MTIME_NS = 2_000_000_000
"""A note modified this close to the moment it is read gets no `note_hashes` record: a later write within
the same timestamp tick (2 s on FAT, 1 s on HFS+, milliseconds elsewhere) could leave its mtime and size
as they were."""


@dataclass
class PlannedNote:
    """A note of the run as prepared for upload, and the branch decided for it."""

    note: PreparedNote
    decision: Decision
    titles: tuple[str, ...] = ()
    """The registry titles of the note's rows as the run found them."""


FEW_PATHS = 200
"""A run of up to this many notes reads the mappings it looks at (`RegistryView.read` with `paths`); more, and
it reads the notebook's whole registry at once."""
READING_STEP = 64
"""`load_notes` says how far it got (`SyncDeps.reading`) every this many notes, and when done."""


@dataclass
class RegistryView:
    """The notebook's source mappings as a run finds them, read once (`StateStore.mappings_with_resolved_ids`),
    so deciding N notes' branches costs one query, not a few per note; or, for a run of a few notes (`ask` on
    a vault of 10,000), only the mappings it looks at, each read on first use. Its lookups are named as the
    store's."""

    store: StateStore
    notebook_id: str
    by_path: dict[str, list[tuple[SourceMapping, str]]] = field(default_factory=dict)
    by_source: dict[str, SourceMapping] = field(default_factory=dict)
    complete: bool = False
    """Whether `by_path` and `by_source` hold the whole registry (else they are filled as paths are looked up)."""
    _by_hash: dict[str, list[SourceMapping]] | None = field(default=None, repr=False)

    @classmethod
    def read(cls, store: StateStore, notebook_id: str, paths: Collection[str] | None = None) -> RegistryView:
        """The registry of `notebook_id`: all of it, or with a few `paths` (at most `FEW_PATHS`) theirs for now."""
        view = cls(store, notebook_id)
        if paths is not None and len(paths) <= FEW_PATHS:
            for path in paths:
                view.mappings(path)
            return view
        view.read_all()
        return view

    def read_all(self) -> None:
        """Read the whole registry (once)."""
        if self.complete:
            return
        self.by_path, self.by_source, self._by_hash = {}, {}, None
        for row, resolved in self.store.mappings_with_resolved_ids(self.notebook_id):
            self.by_path.setdefault(row.path, []).append((row, resolved))
            held = self.by_source.get(resolved)
            if held is None or (held.source_id != resolved and row.source_id == resolved):
                self.by_source[resolved] = row
        self.complete = True

    def mappings(self, path: str) -> list[tuple[SourceMapping, str]]:
        """The mappings of `path` by part, each with its source id resolved (read now if not read yet)."""
        rows = self.by_path.get(path)
        if rows is None:
            if self.complete:
                return []
            rows = [(m, self.store.resolve_source_id(m.source_id))
                    for m in self.store.mappings_by_path(self.notebook_id, path)]
            self.by_path[path] = rows
        return rows

    def resolved_mappings(self, path: str) -> list[ResolvedMapping]:
        """The mappings of `path`, ordered by part, with their source ids resolved."""
        return [ResolvedMapping(r.part, resolved, r.content_hash, r.source_id) for r, resolved in self.mappings(path)]

    def mappings_by_hash(self, content_hash: str) -> list[SourceMapping]:
        """The rows whose uploaded content has `content_hash` (as `StateStore.mappings_by_hash`), from the whole
        registry when it was read, else from the store."""
        if not self.complete:
            return self.store.mappings_by_hash(self.notebook_id, content_hash)
        if self._by_hash is None:
            self._by_hash = {}
            for rows in self.by_path.values():
                for row, _ in rows:
                    self._by_hash.setdefault(row.content_hash, []).append(row)
            for found in self._by_hash.values():
                found.sort(key=lambda r: (r.path, r.part))
        return self._by_hash.get(content_hash, [])

    def mapping_by_source_id(self, source_id: str) -> SourceMapping | None:
        """The mapping holding `source_id` or an id on its alias chain (as `StateStore.mapping_by_source_id`)."""
        if not self.complete:
            return self.store.mapping_by_source_id(self.notebook_id, source_id)
        row = self.by_source.get(source_id)
        if row is None:
            resolved = self.store.resolve_source_id(source_id)
            row = self.by_source.get(resolved) if resolved != source_id else None
        return row


def split_limits(deps: SyncDeps) -> str:
    """The split limits as a `NoteHashes.split`: hashes made with other limits are not this run's."""
    return split_key(deps.max_words, deps.max_bytes)


def load_notes(deps: SyncDeps, paths: Sequence[str], found: Collection[str] = (),
               known: Mapping[str, NoteHashes] | None = None,
               read: list[NoteHashes] | None = None,
               stats: Mapping[str, tuple[int, int]] | None = None) -> list[PreparedNote | NoteOutcome]:
    """Read and prepare each path; excluded notes become excluded outcomes.

    A note an `exclude` pattern matches is excluded by it first, unread, whatever else it is (empty, binary,
    named): the pattern is what keeps it out, and an `--all` run takes out its source. The rest is the
    admission rule every reader of notes shares (`text.admit_note`): an unreadable note (binary, invalid UTF-8)
    fails when the user named it, and is excluded with the reason when it was only `found` by walking the vault —
    as the index skips it — so one stray file cannot fail every `--all` run; an empty note (white space only) is
    excluded as `empty`, one whose front matter says `nlmsync: false` as such.

    A path whose file has the mtime and size of its `known` record is not read: its note is the recorded
    hashes (`known_note`; front matter cannot have changed).
    Each note read is appended to `read` as a record to keep, unless it was modified too recently to
    trust its mtime (`RACY_MTIME_NS`). A path of `stats` is taken to have the (mtime, size) given there (a walk
    of the vault just found its file so) rather than stat'ed again.
    """
    items: list[PreparedNote | NoteOutcome] = []
    split = split_limits(deps)
    patterns = deps.settings.exclude
    trusted_before = time.time_ns() - RACY_MTIME_NS
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


def read_for_upload(deps: SyncDeps, items: Sequence[PlannedNote | NoteOutcome], found: Collection[str],
                    read: list[NoteHashes]) -> list[PreparedNote | NoteOutcome] | None:
    """Read the notes that were recognised by their stat but are to be uploaded after all (their source is
    gone): the run's notes again, those read, to be decided again; None when there are none."""
    if not any(isinstance(item, PlannedNote) and not item.note.is_read and needs_upload(item) for item in items):
        return None
    notes: list[PreparedNote | NoteOutcome] = []
    for item in items:
        if not isinstance(item, PlannedNote):
            notes.append(item)
        elif not item.note.is_read and needs_upload(item):
            notes.extend(load_notes(deps, [item.note.path], found, read=read))
        else:
            notes.append(item.note)
    return notes


def decide_all(deps: SyncDeps, notes: Sequence[PreparedNote | NoteOutcome], remote: RemoteView,
               registry: RegistryView) -> list[PlannedNote | NoteOutcome]:
    """Each note with its decision, in order (outcomes pass through); a vanished path is claimed by at most
    one rename."""
    requested = {n.path for n in notes if isinstance(n, PreparedNote)}
    claimed: set[str] = set()
    remote_ids = remote.ids()
    items: list[PlannedNote | NoteOutcome] = []
    for note in notes:
        if isinstance(note, NoteOutcome):
            items.append(note)
            continue
        current = registry.resolved_mappings(note.path)
        titles = tuple(r.title for r, _ in registry.mappings(note.path))
        candidates: list[tuple[str, list[ResolvedMapping]]] = []
        if not any(p.source_id in remote_ids for p in current):
            seen: set[str] = set()
            for row in registry.mappings_by_hash(note.hashes[0]):
                old = row.path
                if old in seen or old in claimed or old in requested or _exists(deps.vault_root, old):
                    continue
                seen.add(old)
                candidates.append((old, registry.resolved_mappings(old)))
        decision = decide_branch(note.hashes, current, remote_ids, candidates)
        if decision.rename_from is not None:
            claimed.add(decision.rename_from)
        items.append(PlannedNote(note, decision, titles))
    return items


def _exists(root: Path, rel_path: str) -> bool:
    try:
        return vault_files.resolve_in_vault(root, rel_path).is_file()
    except InputError:
        return False


def needs_upload(work: PlannedNote) -> bool:
    return work.decision.branch in (Branch.REPLACED, Branch.ADDED)


def slots_needed(work: PlannedNote, remote: RemoteView) -> int:
    """Parts that will really be uploaded: a part whose exact title is already listed is adopted."""
    return sum(1 for p in work.note.parts if remote.find_title(p.title) is None)


def needs_retitle(work: PlannedNote) -> bool:
    """Whether a kept note's registry titles name another path or part than its parts' (renamed, or an earlier
    retitle failed); the hash a title carries stays what it is."""
    parts = work.note.parts
    return len(work.titles) != len(parts) or any(
        title != retitled(title, p.path, p.index, p.part_count) for title, p in zip(work.titles, parts, strict=True))


def check_capacity_up_front(deps: SyncDeps, works: list[PlannedNote], remote: RemoteView, registry: RegistryView) -> None:
    """Refuse before any upload when the requested notes alone cannot fit in the notebook.

    Raises:
        CapacityError: the parts of the requested notes plus the sources nlmsync may not evict
            exceed the capacity.
    """
    capacity = deps.capacity
    required = sum(len(w.note.parts) for w in works)
    if required + len(remote) <= capacity:  # fits even if no listed source may make room
        return
    untouchable = untouchable_count(remote, registry, {p.title for w in works for p in w.note.parts
                                                       if p.text is not None})
    if required + untouchable > capacity:
        if len(remote) > capacity:  # the setting, not the notes, is what is wrong: say so first
            raise CapacityError(f"notebook {deps.notebook_id} holds {len(remote)} sources, capacity is {capacity}: "
                                f"set 'capacity' to your plan's limit; nothing was uploaded", hint=CAPACITY_HINT)
        taken = f" ({untouchable} taken by sources nlmsync did not upload)" if untouchable else ""
        raise CapacityError(
            f"the {len(works)} requested notes need {required} sources but notebook {deps.notebook_id} "
            f"holds at most {capacity}{taken}; nothing was uploaded", hint=CAPACITY_HINT)


def untouchable_count(remote: RemoteView, registry: RegistryView, own_titles: Collection[str]) -> int:
    """The listed sources no eviction may take: neither a managed single-note source nor titled as one of
    `own_titles` (the run's own uploads, adopted rather than added) — hand-added sources, look-alikes, packs."""
    registry.read_all()
    untouchable = 0
    for source_id, title in remote.sources.items():
        if title in own_titles and source_id not in remote.foreign:
            continue
        row = registry.mapping_by_source_id(source_id)
        if row is None or not row.managed:
            untouchable += 1
    return untouchable
