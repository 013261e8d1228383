"""The second half of source preparation for a run's notes: carrying the decided branches out (`Runner`), or in a dry run
saying what would be done (`simulate`).

Evictions happen one by one before the uploads they make room for, after in-flight uploads settle so
the choice is deterministic; uploads of independent notes run concurrently (bounded by `concurrency`; the
client paces them to `add_rate_per_minute`); the registry is written note by note in the order the paths
were given, each changed note in one atomic step; the uses of the run's notes (usage marking) are recorded together,
in that order, at the end of the run (one step, whatever the number of notes: marking a note costs a look at
the protected segment, which at 10,000 notes is not free). A run killed before its end leaves its uses
unrecorded (the eviction order stays as the run found it); its registry rows are written. Titles are deterministic, so before any add — and after an add whose
answer was lost — the remote listing is searched for the part's exact title and a match is adopted
instead of uploading twice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

import anyio

from nlmsync.errors import (
    AuthenticationRequiredError,
    CapacityError,
    ConnectionProblem,
    NlmsyncError,
    NotebookLMError,
)
from nlmsync.store import NoteHashes, SourceMapping
from nlmsync.sync.decide import PlannedNote, needs_retitle, needs_upload, slots_needed
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.eviction import full_notebook_error, make_room, means_full, plan_evictions, strict_delete
from nlmsync.sync.plan import Branch, PreparedNote, PreparedPart
from nlmsync.sync.reconcile import RemoteView, lookup_after_lost_answer
from nlmsync.sync.report import NoteOutcome, stop_report, stopped_line
from nlmsync.sync.titles import retitled


class _NotTried(Exception):
    """An upload not sent because an earlier one found the server unusable (`Runner.fatal`)."""


def _why_stopped(fatal: NlmsyncError | None) -> str:
    """A few words for why a run stopped, said by each note it did not try (the error itself is said once)."""
    if isinstance(fatal, CapacityError):
        return "the notebook is full"
    if isinstance(fatal, AuthenticationRequiredError):
        return "the server needs a Google login"
    if isinstance(fatal, NotebookLMError):
        return "the server cannot be used"
    return "the state file cannot be written"


async def add_source(deps: SyncDeps, remote: RemoteView, text: str, title: str,
                     adoptable: Callable[[list[str]], str | None]) -> tuple[str, bool]:
    """Upload `text` as a source titled `title`; returns its id and whether an existing source was taken.

    When the answer is lost, a fresh listing says whether the add happened: a source with the title that
    `adoptable` accepts (of the ids listed under it) is taken; none means the add did not happen, so one more
    cannot duplicate (a copy that lands later is found and deleted by the next run, `adopt`).

    Raises:
        NotebookLMError: the server refused the add, or could not be asked.
    """
    deps_client, notebook_id = deps.client, deps.notebook_id
    try:
        added = await deps_client.source_add_text(notebook_id, text, title, wait=deps.settings.wait_for_processing)
    except ConnectionProblem:
        listing = await lookup_after_lost_answer(deps_client, notebook_id)
        found = adoptable([sid for sid, listed in listing.items() if listed == title])
        if found is not None:
            remote.added(found, title)
            return found, True
        added = await deps_client.source_add_text(notebook_id, text, title, wait=deps.settings.wait_for_processing)
    remote.added(added.source_id, title)
    return added.source_id, False


def _failed(work: PlannedNote, message: str) -> NoteOutcome:
    return NoteOutcome(path=work.note.path, branch=Branch.FAILED, part_count=len(work.note.parts), error=message)


def _outcome(work: PlannedNote, ids: list[str], adopted: bool) -> NoteOutcome:
    decision = work.decision
    return NoteOutcome(path=work.note.path, branch=decision.branch, source_ids=ids,
                       previous_source_ids=list(decision.previous), part_count=len(work.note.parts),
                       renamed_from=decision.rename_from, adopted=adopted)


class Runner:
    """Carries out the decisions: evictions in order, uploads concurrently, registry writes in order."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, protect: set[str], read: list[NoteHashes] | None = None,
                 forget: Collection[str] = ()) -> None:
        self.deps = deps
        self.remote = remote
        self.exclude = set(protect)
        self.reserved = 0
        self.inflight = 0
        self.changed = anyio.Event()
        self.semaphore = anyio.Semaphore(deps.settings.concurrency)
        self.fatal: NlmsyncError | None = None
        """The error after which no upload of the run can succeed: the first one stops the run."""
        self.not_tried = 0
        self.full = False
        """The server refused an add as full, which stopped the run."""
        self.unmarked: list[str] = []
        """Notes whose use is not recorded yet, in order: recorded together at the end of the run."""
        self.read = list(read or ())
        self.forget = list(forget)
        """`note_hashes` records to keep and paths whose records go: written with the uses."""

    def occupied(self) -> int:
        return len(self.remote) + self.reserved

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

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
        stop: BaseException | None = None
        async with anyio.create_task_group() as tg:
            previous = anyio.Event()
            previous.set()
            trailing: list[str] = []  # reused notes after the last task started: recorded once it committed
            for index, item in enumerate(items):
                if isinstance(item, NoteOutcome):
                    results[index].append(item)
                    self.deps.progress(item)
                    continue
                if self.fatal is not None and needs_upload(item):
                    outcome = self._not_tried(item)
                    results[index].append(outcome)
                    self.deps.progress(outcome)
                    continue
                if self._reused_as_is(item):  # no task: its use is recorded after the notes before it
                    outcome = _outcome(item, list(item.decision.keep), False)
                    (self.unmarked if previous.is_set() else trailing).append(item.note.path)
                    results[index].append(outcome)
                    self.deps.progress(outcome)
                    continue
                needed = slots_needed(item, self.remote) if needs_upload(item) else 0
                if needed:
                    try:
                        await self._make_room(needed, results[index])
                    except CapacityError as exc:
                        stop = exc
                        break
                    except FATAL_ERRORS as exc:
                        stop = exc
                        break
                    except NotebookLMError as exc:
                        outcome = _failed(item, f"could not make room: {exc}")
                        results[index].append(outcome)
                        self.deps.progress(outcome)
                        continue
                self.reserved += needed
                self.inflight += 1
                done = anyio.Event()
                trailing = []
                tg.start_soon(self._process, item, needed, previous, done, results[index], trailing)
                previous = done
        outcomes = [outcome for group in results for outcome in group]
        if stop is None and self.fatal is not None:
            stop = self._learn_capacity() if self.full else self.fatal
            stop.message = stopped_line(stop.message, items, outcomes, self.not_tried)
        if isinstance(stop, NlmsyncError):
            stop_report(stop, self.deps.notebook_id, outcomes)
        if stop is not None:
            raise stop
        return outcomes

    def _learn_capacity(self) -> NlmsyncError:
        """Once the uploads under way settled, the notebook holds what the server will take: later runs keep
        it to that many sources."""
        deps, held = self.deps, len(self.remote)
        deps.store.learn_capacity(deps.notebook_id, held, deps.capacity_limit.given)
        return full_notebook_error(deps.notebook_id, held, deps.capacity_limit.given)

    def _not_tried(self, work: PlannedNote) -> NoteOutcome:
        self.not_tried += 1
        return _failed(work, f"not tried: {_why_stopped(self.fatal)}")

    @staticmethod
    def _reused_as_is(work: PlannedNote) -> bool:
        """A reused note with nothing to write but its use: no alias to canonicalize, no retitle."""
        return work.decision.branch == Branch.REUSED and not work.decision.canonicalize and not needs_retitle(work)

    async def _make_room(self, needed: int, evicted: list[NoteOutcome]) -> None:
        """Evict for `needed` uploads, first letting in-flight notes finish so the choice is deterministic."""
        store, nb, capacity = self.deps.store, self.deps.notebook_id, self.deps.capacity
        while self.occupied() + needed > capacity and self.inflight:
            await self.changed.wait()
        before = len(evicted)
        try:
            await make_room(self.deps.client, store, nb, self.remote, needed, capacity, self.exclude,
                            self.occupied, evicted)
        finally:
            for outcome in evicted[before:]:
                self.deps.progress(outcome)

    async def _process(self, work: PlannedNote, needed: int, previous: anyio.Event, done: anyio.Event,
                       out: list[NoteOutcome], trailing: list[str]) -> None:
        retire: list[str] = []
        try:
            try:
                try:
                    if needs_upload(work):
                        ids, adopted = await self._upload(work)
                    else:
                        ids, adopted = list(work.decision.keep), False
                    outcome = _outcome(work, ids, adopted)
                except _NotTried:
                    outcome = self._not_tried(work)
                except FATAL_ERRORS as exc:
                    self.fatal = self.fatal or exc
                    outcome = _failed(work, str(exc))
                except NotebookLMError as exc:
                    if self.fatal is None and means_full(exc, len(self.remote)):
                        self.full = True  # no later upload can succeed: the run stops (exit 3)
                        self.fatal = full_notebook_error(self.deps.notebook_id, len(self.remote),
                                                         self.deps.capacity_limit.given)
                    outcome = _failed(work, str(exc))
                finally:
                    self.reserved -= needed
                await previous.wait()
                if outcome.branch != Branch.FAILED:
                    try:
                        retire = self._commit(work, outcome)
                    except NlmsyncError as exc:  # the state file cannot take it (full, locked): the run stops
                        self.fatal = self.fatal or exc
                        outcome = _failed(work, f"not recorded: {exc}")
                out.append(outcome)
                self.deps.progress(outcome)
            finally:
                self.unmarked.extend(trailing)
                done.set()
            try:
                for source_id in retire:
                    await self._delete_best_effort(source_id)
                if outcome.branch == Branch.RENAMED or (outcome.branch == Branch.REUSED and needs_retitle(work)):
                    await self._retitle_best_effort(work)
            except NlmsyncError as exc:  # the state file cannot take what they would record: the run stops
                self.fatal = self.fatal or exc
        finally:
            self.inflight -= 1
            self._signal()

    async def _upload(self, work: PlannedNote) -> tuple[list[str], bool]:
        ids: list[str] = []
        adopted_any = False
        for part in work.note.parts:
            if part.text is None:  # `read_for_upload` reads every note to upload: never reached
                raise RuntimeError(f"{work.note.path}: about to upload a note that was not read")
            source_id, adopted = await self._add_part(work.note.path, part.text, part.title)
            ids.append(source_id)
            adopted_any = adopted_any or adopted
        return ids, adopted_any

    def _adoptable(self, path: str, candidates: Iterable[str]) -> str | None:
        """The first of `candidates` (ids of sources titled as a part of `path`) that is nlmsync's upload of
        this note: registered to `path`, or to nothing (and not a look-alike)."""
        for source_id in candidates:
            if source_id in self.remote.foreign:
                continue
            row = self.deps.store.mapping_by_source_id(self.deps.notebook_id, source_id)
            if row is None or row.path == path:
                return source_id
        return None

    async def _add_part(self, path: str, text: str, title: str) -> tuple[str, bool]:
        existing = self._adoptable(path, self.remote.titled(title))
        if existing is not None:
            return existing, True
        async with self.semaphore:
            if self.fatal is not None:  # queued behind an upload that found the server unusable
                raise _NotTried
            return await add_source(self.deps, self.remote, text, title, lambda ids: self._adoptable(path, ids))

    def _commit(self, work: PlannedNote, outcome: NoteOutcome) -> list[str]:
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

    async def _retitle_best_effort(self, work: PlannedNote) -> None:
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
            if self.remote.sources.get(source_id) != title:
                try:
                    await deps.client.source_rename(nb, source_id, title)
                except NotebookLMError:
                    continue
                self.remote.added(source_id, title)
            with store.step():
                store.upsert_mapping(row, source_id=source_id, title=title)

    async def _delete_best_effort(self, source_id: str) -> None:
        """Delete a replaced source; on any failure it stays queued for a later run."""
        deps = self.deps
        try:
            await strict_delete(deps.client, deps.notebook_id, self.remote, source_id)
        except NotebookLMError:
            return
        with deps.store.step():
            deps.store.deletion_done(deps.notebook_id, source_id)


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
