"""The one executor every unit of a run goes through (`Executor`): room, add first, record in turn, then retire;
the first error after which no upload can succeed stops the run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

import anyio

from nlmsync.errors import (
    AuthenticationRequiredError,
    CapacityError,
    ConnectionProblem,
    FileOutsideServerFoldersError,
    NlmsyncError,
    NotebookLMError,
)
from nlmsync.sync.capacity import full_notebook_error, means_full, refused_as_invalid
from nlmsync.sync.carry.eviction import make_room
from nlmsync.sync.remote import AddedSourceId, RemoteView, lookup_after_lost_answer, strict_delete
from nlmsync.sync.run import FATAL_ERRORS, SyncDeps
from nlmsync.sync.units import Added, Unit, Upload, Uploaded

U = TypeVar("U", bound=Unit)


async def add_source(deps: SyncDeps, remote: RemoteView, upload: Upload) -> Added:
    """Add `upload` to the notebook as a source.

    When the answer is lost, a fresh listing says whether the add happened: a source with the title that
    `upload.claim` accepts (of the ids listed under it) is taken; none means the add did not happen, so one more
    cannot duplicate (a copy that lands later is found and deleted by the next run, `adopt`).

    Raises:
        NotebookLMError: the server refused the add, or could not be asked.
    """
    try:
        added = await _send(deps, upload)
    except ConnectionProblem:
        listing = await lookup_after_lost_answer(deps.client, deps.notebook_id)
        titles = upload.titles()
        found = upload.claim([sid for sid, listed in listing.items() if listed in titles])
        if found is not None:
            remote.added(found, listing[found])
            return Added(found, adopted=True)
        added = await _send(deps, upload)
    remote.added(added.source_id, upload.title)
    return Added(added.source_id)


async def _send(deps: SyncDeps, upload: Upload) -> AddedSourceId:
    """One `source_add` of `upload`: its file, or its text."""
    client, notebook_id = deps.client, deps.notebook_id
    if upload.file is not None:
        return await client.source_add_file(notebook_id, upload.file, upload.title)
    return await client.source_add_text(notebook_id, upload.text, upload.title,
                                        wait=deps.settings.wait_for_processing)


def why_stopped(fatal: NlmsyncError | None) -> str:
    """A few words for why a run stopped, said by each unit it did not try (the error itself is said once)."""
    if isinstance(fatal, CapacityError):
        return "the notebook is full"
    if isinstance(fatal, AuthenticationRequiredError):
        return "the server needs a Google login"
    if isinstance(fatal, FileOutsideServerFoldersError):
        return "the server may not read the files"
    if isinstance(fatal, NotebookLMError):
        return "the server cannot be used"
    return "the state file cannot be written"


class _Turn:
    """A started unit's turn (`units.Turn`): it records after the unit started before it."""

    def __init__(self, before: _Turn | None) -> None:
        self._before = before
        self._passed = anyio.Event()

    async def wait(self) -> None:
        if self._before is not None:
            await self._before._passed.wait()

    def passed(self) -> None:
        self._passed.set()


class _NotTried(Exception):
    """An upload not sent because an earlier one stopped the run (`Executor.fatal`)."""


class Executor(Generic[U]):
    """Carries out a run's units in order.

    - **Room**: a unit's uploads are counted against the sources the notebook holds (its listing) and those
      reserved by units under way. A unit that does not fit waits for the units under way, each of which frees
      the sources it replaces once its own uploads landed (so replacements go in waves, never asking the server
      for a source beyond the capacity); then, where the kind allows it (`retire_early`: a group of packs deletes
      what it replaces before its new packs land), this unit and those not started yet free sources of their own;
      then managed single-note sources are evicted (`eviction.make_room`), after the units under way settled, so
      the choice is deterministic.
    - **Add first, then record, then retire**: a unit's uploads (a listed source its upload claims is taken
      instead; at most `concurrency` adds at a time across units), then what it did recorded in its turn, then
      the sources it replaced deleted (a delete that fails stays queued). A slow upload (`Upload.slow`: audio or
      video, which the server processes for minutes before it answers) waits among at most `concurrency` slow ones
      of its own, so it never holds up the others' adds, and its unit records as soon as it is done, so it never
      holds up their recording either.
    - **Stopping**: the first error after which no upload can succeed — the server unusable, the notebook full,
      the state file unwritable — stops the run: the units not started are not tried, the ones under way finish,
      and a notebook the server found full is reported to the capacity (`Capacity.refused_at`,
      `StateStore.learn_capacity`).
    """

    def __init__(self, deps: SyncDeps, remote: RemoteView, protect: set[str],
                 retire_early: Callable[[U], Awaitable[bool]] | None = None) -> None:
        self.deps = deps
        self.remote = remote
        self.retire_early = retire_early
        """Frees one source a unit replaces before its uploads land; False when it has none left."""
        self.exclude = set(protect)
        """Paths never evicted by this run (its own notes; a path is added once its eviction was tried)."""
        self.reserved = 0
        self.inflight = 0
        self.changed = anyio.Event()
        self.semaphore = anyio.Semaphore(deps.settings.concurrency)
        self.slow_semaphore = anyio.Semaphore(deps.settings.concurrency)
        """The slow uploads' own limit (`Upload.slow`): their long waits never take the others' places."""
        self.fatal: NlmsyncError | None = None
        """The error after which no upload of the run can succeed: the first one stops the run."""
        self.full = False
        """The server refused an add as full, which stopped the run."""
        self.held_found = 0
        """The sources a listing read after a refusal found (another device's among them)."""
        self.waiting: list[U] = []
        """Units not started yet: they may free sources early when another needs room."""
        self._last_turn: _Turn | None = None

    def occupied(self) -> int:
        return len(self.remote) + self.reserved

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def execute(self, units: Sequence[U]) -> BaseException | None:
        """Carry out `units` in order; returns the error that stopped the run, if one did."""
        self.waiting = list(units)
        stop: BaseException | None = None
        async with anyio.create_task_group() as tg:
            while self.waiting:
                unit = self.waiting.pop(0)
                if self.fatal is not None:
                    unit.failed(f"not tried: {why_stopped(self.fatal)}", not_tried=True)
                    continue
                uploads = unit.start()
                needed = sum(1 for upload in uploads
                             if all(self.remote.find_title(title) is None for title in upload.titles()))
                if needed:
                    try:
                        await self._make_room(needed, unit)
                    except (CapacityError, *FATAL_ERRORS) as exc:
                        stop = exc
                        break
                    except NotebookLMError as exc:
                        unit.failed(f"could not make room: {exc}")
                        continue
                self.reserved += needed
                self.inflight += 1
                if any(upload.slow for upload in uploads):  # records when done: no unit waits for it
                    turn = _Turn(None)
                else:
                    self._last_turn = turn = _Turn(self._last_turn)
                tg.start_soon(self._carry_out, unit, uploads, needed, turn)
        if stop is None and self.full:
            stop = self._refused_as_full()
        return stop or self.fatal

    async def _make_room(self, needed: int, unit: U) -> None:
        capacity = self.deps.capacity.value
        while self.occupied() + needed > capacity and self.inflight:
            await self.changed.wait()
        if self.retire_early is not None:
            for candidate in [unit, *self.waiting]:
                while self.occupied() + needed > capacity and await self.retire_early(candidate):
                    pass
        if self.occupied() + needed <= capacity:
            return
        evicted = unit.evictions
        before = len(evicted)
        try:
            await make_room(self.deps, self.remote, needed, self.exclude, self.occupied, evicted)
        finally:
            for outcome in evicted[before:]:
                self.deps.progress(outcome)

    async def _carry_out(self, unit: U, uploads: Sequence[Upload], needed: int, turn: _Turn) -> None:
        try:
            try:
                uploaded = Uploaded(tuple([await self._add(upload) for upload in uploads]))
            except _NotTried:
                uploaded = Uploaded(error=f"not tried: {why_stopped(self.fatal)}", not_tried=True)
            except FATAL_ERRORS as exc:
                self.fatal = self.fatal or exc
                uploaded = Uploaded(error=str(exc))
            except NotebookLMError as exc:
                if self.fatal is None and await self._means_full(exc):
                    self.full = True  # no later upload can succeed: the run stops (exit 3)
                    self.fatal = full_notebook_error(self.deps.notebook_id, self._held(),
                                                     self.deps.capacity.under)
                uploaded = Uploaded(error=str(exc))
            finally:
                self.reserved -= needed
            try:
                for source_id in await unit.finish(uploaded, turn):
                    await self._delete_replaced(source_id)
            except NlmsyncError as exc:  # the state file cannot take what they would record: the run stops
                self.fatal = self.fatal or exc
            finally:
                turn.passed()
        finally:
            self.inflight -= 1
            self._signal()

    async def _means_full(self, refusal: NotebookLMError) -> bool:
        """Whether the server refused an add because the notebook is full. An add refused as an invalid argument
        while the run's listing holds fewer sources than any plan's limit reads the notebook again: another device
        may have filled it since the run read it."""
        if means_full(refusal, len(self.remote)):
            return True
        if not refused_as_invalid(refusal):
            return False
        try:
            listing = await lookup_after_lost_answer(self.deps.client, self.deps.notebook_id)
        except NotebookLMError:
            return False
        self.held_found = len(listing)
        return means_full(refusal, len(listing))

    def _held(self) -> int:
        """The sources the notebook holds as far as the run knows: its listing, or a fresh one read after a
        refusal, when it holds more."""
        return max(len(self.remote), self.held_found)

    async def _add(self, upload: Upload) -> Added:
        """One upload: a listed source it claims taken, else added, at most `concurrency` at a time.

        Raises:
            _NotTried: the run stopped while this add waited for its turn.
            NotebookLMError: the server refused the add, or could not be asked.
        """
        found = upload.claim([sid for title in upload.titles() for sid in self.remote.titled(title)])
        if found is not None:
            return Added(found, adopted=True)
        async with self.slow_semaphore if upload.slow else self.semaphore:
            if self.fatal is not None:  # queued behind an add that found the server unusable or full
                raise _NotTried
            return await add_source(self.deps, self.remote, upload)

    async def _delete_replaced(self, source_id: str) -> None:
        """Delete a replaced source (queued for deletion when it was replaced); on any failure it stays queued for
        a later run."""
        deps = self.deps
        try:
            await strict_delete(deps.client, deps.notebook_id, self.remote, source_id)
        except NotebookLMError:
            return
        with deps.store.step():
            deps.store.deletion_done(deps.notebook_id, source_id)

    def _refused_as_full(self) -> NlmsyncError:
        """Once the uploads under way settled, the notebook holds what the server will take: the refusal is reported
        to the capacity, and later runs keep the notebook to that many sources."""
        deps, held = self.deps, self._held()
        under = deps.capacity.under
        deps.store.learn_capacity(deps.notebook_id, held, under)
        deps.capacity = deps.capacity.refused_at(held)
        return full_notebook_error(deps.notebook_id, held, under, deps.capacity)
