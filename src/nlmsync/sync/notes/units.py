"""Notes kept alone, carried out: a `NoteUnit` per note — its parts uploaded, then the note recorded in one step in
the order the notes were given — or in a dry run said as what would be done (`simulate`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import partial

from nlmsync.errors import NotebookLMError
from nlmsync.store import SourceMapping
from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.eviction import plan_evictions
from nlmsync.sync.notes.decide import PlannedNote, needs_retitle, needs_upload, reused_as_is, slots_needed
from nlmsync.sync.prepared import PreparedNote, PreparedPart
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import retitled
from nlmsync.sync.units import Turn, Upload, Uploaded, own_upload, record_in_turn


def _failed(work: PlannedNote, message: str, *, not_tried: bool = False) -> NoteOutcome:
    return NoteOutcome(path=work.note.path, branch=Branch.FAILED, part_count=len(work.note.parts), error=message,
                       not_tried=not_tried)


def _outcome(work: PlannedNote, ids: list[str], adopted: bool) -> NoteOutcome:
    decision = work.decision
    return NoteOutcome(path=work.note.path, branch=decision.branch, source_ids=ids,
                       previous_source_ids=list(decision.previous), part_count=len(work.note.parts),
                       renamed_from=decision.rename_from, adopted=adopted)


class NoteUnit:
    """One note of the run, as a unit of the executor (`units.Unit`)."""

    def __init__(self, notes: NotesAlone, work: PlannedNote, out: list[NoteOutcome]) -> None:
        self.notes = notes
        self.work = work
        self.evictions = out
        """The run's outcomes at this note's place: the evictions made for it, then its own."""

    def start(self) -> list[Upload]:
        work = self.work
        if not needs_upload(work):
            return []
        path = work.note.path
        uploads = []
        for part in work.note.parts:
            if part.text is None:  # `read_for_upload` reads every note to upload: never reached
                raise RuntimeError(f"{path}: about to upload a note that was not read")
            uploads.append(Upload(part.text, part.title, partial(self.notes.adoptable, path)))
        return uploads

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        self._report(_failed(self.work, message, not_tried=not_tried))

    async def finish(self, uploaded: Uploaded, turn: Turn) -> list[str]:
        work = self.work
        if uploaded.error is not None:
            outcome = _failed(work, uploaded.error, not_tried=uploaded.not_tried)
        elif needs_upload(work):
            outcome = _outcome(work, [a.source_id for a in uploaded.added], any(a.adopted for a in uploaded.added))
        else:
            outcome = _outcome(work, list(work.decision.keep), False)
        retire = await record_in_turn(turn, outcome, partial(self.notes.commit, work, outcome), self._report)
        if outcome.branch == Branch.RENAMED or (outcome.branch == Branch.REUSED and needs_retitle(work)):
            await self.notes.retitle_best_effort(work)
        return retire

    def _report(self, outcome: NoteOutcome) -> None:
        self.evictions.append(outcome)
        self.notes.deps.progress(outcome)


@dataclass
class NotesInOrder:
    """A run's notes kept alone as units (`units`), each with its place in the report (`places`, in the order the
    notes were given): the evictions made for it, then its own outcome."""

    units: list[NoteUnit]
    places: list[list[NoteOutcome]]

    def outcomes(self) -> list[NoteOutcome]:
        return [outcome for place in self.places for outcome in place]


def note_units(notes: NotesAlone, items: Sequence[PlannedNote | NoteOutcome]) -> NotesInOrder:
    """A `NoteUnit` per decided note of `items` that has work to carry out; an outcome decided before (excluded,
    unreadable), and a note reused as it is (nothing to write but its use, `decide.reused_as_is`), are reported in
    their places now and never reach the executor."""
    places: list[list[NoteOutcome]] = [[] for _ in items]
    units: list[NoteUnit] = []
    for item, place in zip(items, places, strict=True):
        if isinstance(item, PlannedNote):
            if not reused_as_is(item):
                units.append(NoteUnit(notes, item, place))
                continue
            item = _outcome(item, list(item.decision.keep), False)
        place.append(item)
        notes.deps.progress(item)
    return NotesInOrder(units, places)


class NotesAlone:
    """What the units of a run's notes kept alone share: the run's deps and listing, and the steps they take in the
    notebook and the state file (adopting an upload, recording a note, retitling its sources)."""

    def __init__(self, deps: SyncDeps, remote: RemoteView) -> None:
        self.deps = deps
        self.remote = remote

    def adoptable(self, path: str, candidates: Iterable[str]) -> str | None:
        """The first of `candidates` (ids of sources titled as a part of `path`) that is nlmsync's upload of
        this note (`units.own_upload`)."""
        return own_upload(self.deps, self.remote, path, candidates)

    def commit(self, work: PlannedNote, outcome: NoteOutcome) -> list[str]:
        """Record one note in one step (its use is recorded with the others at the end of the run); returns the
        old source ids to delete best-effort afterwards."""
        store, nb, note, decision = self.deps.store, self.deps.notebook_id, work.note, work.decision
        retire: list[str] = []
        if decision.branch == Branch.REUSED and not decision.canonicalize:
            return retire
        if decision.branch == Branch.ADDED and not work.titles:  # a note the registry has no row of: one step
            store.add_new_mappings([self._row(note, part, source_id)
                                    for part, source_id in zip(note.parts, outcome.source_ids, strict=True)])
            return retire
        with store.step():
            if decision.rename_from is not None:  # the rename branch, the only one with an old path
                store.rename_mapping(nb, decision.rename_from, note.path)
            elif decision.branch == Branch.REUSED:
                if decision.canonicalize:
                    self._write_rows(note, outcome.source_ids, replace_all=False)
            else:
                rows_before = len(store.mappings_by_path(nb, note.path))
                self._write_rows(note, outcome.source_ids, replace_all=rows_before > len(note.parts))
                new_ids = outcome.source_ids
                for i, old in enumerate(decision.prior_part_ids):
                    new = new_ids[min(i, len(new_ids) - 1)]
                    if old != new:
                        store.register_source_alias(old, new)
                retire = [sid for sid in decision.previous if sid not in new_ids]
                for sid in retire:
                    store.queue_deletion(nb, sid, f"replaced by a new version of {note.path}")
        return retire

    def _row(self, note: PreparedNote, part: PreparedPart, source_id: str, title: str | None = None) -> SourceMapping:
        return SourceMapping(notebook_id=self.deps.notebook_id, path=note.path, part=part.index,
                             part_count=len(note.parts), source_id=source_id, content_hash=part.content_hash,
                             title=title or part.title, status="active", managed=True)

    def _write_rows(self, note: PreparedNote, ids: list[str], *, replace_all: bool) -> None:
        store, nb = self.deps.store, self.deps.notebook_id
        titles = {row.part: row.title for row in store.mappings_by_path(nb, note.path)}
        if replace_all:
            store.remove_mappings(nb, note.path)
        for part, source_id in zip(note.parts, ids):
            if part.text is None:  # kept as it is (a reused note not read): its row keeps the title it has
                store.upsert_mapping(self._row(note, part, source_id, titles[part.index]))
            else:
                store.upsert_mapping(self._row(note, part, source_id))

    async def retitle_best_effort(self, work: PlannedNote) -> None:
        """Give a rebound note's sources the title of its new path (`source_rename`), so NotebookLM shows
        where the note now lives. A failed rename changes nothing and never fails the note: the
        registry keeps the old title, so a later run sees the difference and tries again."""
        deps, remote = self.deps, self.remote
        store, nb = deps.store, deps.notebook_id
        for row, part in zip(store.mappings_by_path(nb, work.note.path), work.note.parts):
            title = retitled(row.title, part.path, part.index, part.part_count)
            if row.title == title:
                continue
            source_id = store.resolve_source_id(row.source_id)
            if remote.sources.get(source_id) != title:
                try:
                    await deps.client.source_rename(nb, source_id, title)
                except NotebookLMError:
                    continue
                remote.added(source_id, title)
            with store.step():
                store.upsert_mapping(row, source_id=source_id, title=title)



def simulate(deps: SyncDeps, items: list[PlannedNote | NoteOutcome], remote: RemoteView,
              protect: set[str]) -> list[NoteOutcome]:
    outcomes: list[NoteOutcome] = []
    occupied = len(remote)
    exclude = set(protect)
    for item in items:
        if isinstance(item, NoteOutcome):
            outcomes.append(item)
            continue
        ids = list(item.decision.keep)
        if needs_upload(item):
            needed = slots_needed(item, remote)
            planned, occupied = plan_evictions(deps, remote, occupied, needed, exclude)
            outcomes.extend(planned)
            occupied += needed - len(item.decision.previous)
            ids = [remote.find_title(p.title) or "" for p in item.note.parts]
        outcomes.append(_outcome(item, [i for i in ids if i], False))
    return outcomes
