"""The second half of source preparation for the notes kept one per source: carrying the decided branches out
(`Runner`, a `NoteUnit` per note, scheduled by the run's `executor.Executor`), or in a dry run saying what would be
done (`simulate`).

Evictions happen one by one before the uploads they make room for, after in-flight uploads settle so the choice
is deterministic; uploads of independent notes run concurrently (bounded by `concurrency`; the client paces them
to `add_rate_per_minute`); the registry is written note by note in the order the paths were given, each changed
note in one atomic step; the uses of the run's notes (usage marking) are recorded together, in that order, at the
end of the run (one step, whatever the number of notes: marking a note costs a look at the protected segment,
which at 10,000 notes is not free). A run killed before its end leaves its uses unrecorded (the eviction order
stays as the run found it); its registry rows are written. Titles are deterministic, so before any add — and
after an add whose answer was lost — the remote listing is searched for the part's exact title and a match is
adopted instead of uploading twice.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

import anyio

from nlmsync.errors import (
    NlmsyncError,
    NotebookLMError,
)
from nlmsync.store import NoteHashes, SourceMapping
from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.eviction import plan_evictions
from nlmsync.sync.carry.executor import Executor, Unit, why_stopped
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.notes.decide import PlannedNote, needs_retitle, needs_upload, slots_needed
from nlmsync.sync.prepared import PreparedNote, PreparedPart
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, stop_report, stopped_line
from nlmsync.sync.titles import retitled


def _failed(work: PlannedNote, message: str) -> NoteOutcome:
    return NoteOutcome(path=work.note.path, branch=Branch.FAILED, part_count=len(work.note.parts), error=message)


def _outcome(work: PlannedNote, ids: list[str], adopted: bool) -> NoteOutcome:
    decision = work.decision
    return NoteOutcome(path=work.note.path, branch=decision.branch, source_ids=ids,
                       previous_source_ids=list(decision.previous), part_count=len(work.note.parts),
                       renamed_from=decision.rename_from, adopted=adopted)


class NoteUnit:
    """One note of the run carried out: its parts uploaded (or its sources kept), then recorded in the order the
    notes were given (after the note started before it), then the sources it replaced deleted and its sources
    retitled."""

    def __init__(self, runner: Runner, work: PlannedNote, out: list[NoteOutcome]) -> None:
        self.runner = runner
        self.work = work
        self.evictions = out
        """The run's outcomes at this note's place: the evictions made for it, then its own."""
        self.outcome: NoteOutcome | None = None
        self.started = False
        self.previous = runner.previous
        self.done = anyio.Event()
        self.trailing: list[str] = []

    def slots(self, remote: RemoteView) -> int:
        return slots_needed(self.work, remote) if needs_upload(self.work) else 0

    async def retire_early(self, executor: Executor) -> bool:
        return False  # a note's old source goes after its new one landed

    def begin(self) -> None:
        self.started = True
        self.previous, self.runner.previous = self.runner.previous, self.done
        self.runner.trailing = self.trailing

    async def upload(self, executor: Executor) -> None:
        work = self.work
        if not needs_upload(work):
            self.outcome = _outcome(work, list(work.decision.keep), False)
            return
        path = work.note.path
        ids: list[str] = []
        adopted_any = False
        for part in work.note.parts:
            if part.text is None:  # `read_for_upload` reads every note to upload: never reached
                raise RuntimeError(f"{path}: about to upload a note that was not read")
            existing = self.runner.adoptable(path, executor.remote.titled(part.title))
            if existing is not None:
                source_id, adopted = existing, True
            else:
                source_id, adopted = await executor.add(part.text, part.title,
                                                        lambda ids: self.runner.adoptable(path, ids))
            ids.append(source_id)
            adopted_any = adopted_any or adopted
        self.outcome = _outcome(work, ids, adopted_any)

    def failed(self, executor: Executor, message: str) -> None:
        self._settle(_failed(self.work, message))

    def not_tried(self, executor: Executor) -> None:
        self.runner.not_tried += 1
        self._settle(_failed(self.work, f"not tried: {why_stopped(executor.fatal)}"))

    def _settle(self, outcome: NoteOutcome) -> None:
        if self.started:  # reported in its turn by `finish`
            self.outcome = outcome
            return
        self.evictions.append(outcome)
        self.runner.deps.progress(outcome)

    async def finish(self, executor: Executor) -> list[str]:
        outcome = self.outcome
        assert outcome is not None
        retire: list[str] = []
        try:
            await self.previous.wait()
            if outcome.branch != Branch.FAILED:
                try:
                    retire = self.runner.commit(self.work, outcome)
                except NlmsyncError as exc:  # the state file cannot take it (full, locked): the run stops
                    executor.fatal = executor.fatal or exc
                    outcome = _failed(self.work, f"not recorded: {exc}")
            self.outcome = outcome
            self.evictions.append(outcome)
            self.runner.deps.progress(outcome)
        finally:
            self.runner.unmarked.extend(self.trailing)
            self.done.set()
        return retire

    async def after(self, executor: Executor) -> None:
        outcome = self.outcome
        if outcome is not None and (outcome.branch == Branch.RENAMED
                                    or (outcome.branch == Branch.REUSED and needs_retitle(self.work))):
            await self.runner.retitle_best_effort(self.work, executor.remote)


class Runner:
    """Carries out the decisions, a `NoteUnit` each, through the run's `Executor`: evictions in order, uploads
    concurrently, registry writes in the order the notes were given."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, protect: set[str], read: list[NoteHashes] | None = None,
                 forget: Collection[str] = ()) -> None:
        self.deps = deps
        self.executor = Executor(deps, remote, protect)
        self.not_tried = 0
        self.unmarked: list[str] = []
        """Notes whose use is not recorded yet, in order: recorded together at the end of the run."""
        self.read = list(read or ())
        self.forget = list(forget)
        """`note_hashes` records to keep and paths whose records go: written with the uses."""
        self.previous = anyio.Event()
        """Set once the last note started is recorded: the next one is recorded after it."""
        self.previous.set()
        self.trailing: list[str] = []
        """Notes reused as they are after the last note started: their uses are recorded after it."""

    async def run(self, items: list[PlannedNote | NoteOutcome]) -> list[NoteOutcome]:
        try:
            outcomes = await self._run(items)
        except Exception:
            self._mark_reused()
            raise
        self._mark_reused()
        return outcomes

    def _mark_reused(self) -> None:
        if not self.unmarked and not self.read and not self.forget:
            return
        store = self.deps.store
        with store.step():
            store.mark_used(self.deps.notebook_id, self.unmarked)
            store.record_note_hashes(self.read, self.forget)
        self.unmarked, self.read, self.forget = [], [], []

    async def _run(self, items: list[PlannedNote | NoteOutcome]) -> list[NoteOutcome]:
        results: list[list[NoteOutcome]] = [[] for _ in items]
        units: list[Unit] = []
        for index, item in enumerate(items):
            if isinstance(item, NoteOutcome):  # decided before the run (excluded, unreadable): reported as it is
                results[index].append(item)
                self.deps.progress(item)
            else:
                units.append(NoteUnit(self, item, results[index]))
        stop = await self.executor.execute(units, self._starts)
        outcomes = [outcome for group in results for outcome in group]
        if isinstance(stop, NlmsyncError) and (stop is self.executor.fatal or self.executor.full):
            stop.message = stopped_line(stop.message, items, outcomes, self.not_tried)
        if isinstance(stop, NlmsyncError):
            stop_report(stop, self.deps.notebook_id, outcomes)
        if stop is not None:
            raise stop
        return outcomes

    def _starts(self, unit: Unit) -> bool:
        """Whether a note is carried out by a task of its own: not one reused as it is (its use recorded after the
        notes before it)."""
        assert isinstance(unit, NoteUnit)
        if self.executor.fatal is None and self._reused_as_is(unit.work):
            outcome = _outcome(unit.work, list(unit.work.decision.keep), False)
            (self.unmarked if self.previous.is_set() else self.trailing).append(unit.work.note.path)
            unit.evictions.append(outcome)
            self.deps.progress(outcome)
            return False
        return True

    @staticmethod
    def _reused_as_is(work: PlannedNote) -> bool:
        """A reused note with nothing to write but its use: no alias to canonicalize, no retitle."""
        return work.decision.branch == Branch.REUSED and not work.decision.canonicalize and not needs_retitle(work)

    def adoptable(self, path: str, candidates: Iterable[str]) -> str | None:
        """The first of `candidates` (ids of sources titled as a part of `path`) that is nlmsync's upload of
        this note: registered to `path`, or to nothing (and not a look-alike)."""
        foreign = self.executor.remote.foreign
        for source_id in candidates:
            if source_id in foreign:
                continue
            row = self.deps.store.mapping_by_source_id(self.deps.notebook_id, source_id)
            if row is None or row.path == path:
                return source_id
        return None

    def commit(self, work: PlannedNote, outcome: NoteOutcome) -> list[str]:
        """Record one note in one step (its use is recorded with the others at the end of the run); returns the
        old source ids to delete best-effort afterwards."""
        store, nb, note, decision = self.deps.store, self.deps.notebook_id, work.note, work.decision
        retire: list[str] = []
        if decision.branch == Branch.REUSED and not decision.canonicalize:
            self.unmarked.append(note.path)
            return retire
        if decision.branch == Branch.ADDED and not work.titles:  # a note the registry has no row of: one step
            store.add_new_mappings([self._row(note, part, source_id)
                                    for part, source_id in zip(note.parts, outcome.source_ids, strict=True)])
            self.unmarked.append(note.path)
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
        self.unmarked.append(note.path)
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

    async def retitle_best_effort(self, work: PlannedNote, remote: RemoteView) -> None:
        """Give a rebound note's sources the title of its new path (`source_rename`), so NotebookLM shows
        where the note now lives. A failed rename changes nothing and never fails the note: the
        registry keeps the old title, so a later run sees the difference and tries again."""
        deps = self.deps
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
            planned, occupied = plan_evictions(deps.store, deps.notebook_id, remote, occupied, needed,
                                               deps.capacity, exclude)
            outcomes.extend(planned)
            occupied += needed - len(item.decision.previous)
            ids = [remote.find_title(p.title) or "" for p in item.note.parts]
        outcomes.append(_outcome(item, [i for i in ids if i], False))
    return outcomes
