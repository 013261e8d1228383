"""Carrying out a run's uploads, whatever they upload: one executor for notes kept alone (`runner.NoteUnit`) and
for groups of packs (`pack_runner.PackGroup`), each a unit of work it schedules the same way.

- **Room**: a unit's uploads are counted against the sources the notebook holds (its listing) and those reserved
  by units under way. A unit that does not fit waits for the units under way, each of which frees the sources it
  replaces once its own uploads landed (so replacements go in waves, never asking the server for a source beyond
  the capacity); then this unit and those not started yet may free a source of their own early (a group of
  packs deletes what it replaces before its new packs land); then managed single-note sources are evicted
  (`eviction.make_room`), after the units under way settled, so the choice is deterministic.
- **Add first, then retire**: a unit uploads (at most `concurrency` adds at a time across units), then records
  what it did in one step, then the sources it replaced are deleted (a delete that fails stays queued).
- **Stopping**: the first error after which no upload can succeed — the server unusable, the notebook full, the
  state file unwritable — stops the run: the units not started are reported not tried, the ones under way
  finish, and a notebook the server found full teaches the capacity (`StateStore.learn_capacity`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import anyio

from nlmsync.errors import (
    AuthenticationRequiredError,
    CapacityError,
    ConnectionProblem,
    NlmsyncError,
    NotebookLMError,
)
from nlmsync.sync.carry.eviction import full_notebook_error, make_room, means_full, strict_delete
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.remote import RemoteView, lookup_after_lost_answer
from nlmsync.sync.report import NoteOutcome


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


def why_stopped(fatal: NlmsyncError | None) -> str:
    """A few words for why a run stopped, said by each note it did not try (the error itself is said once)."""
    if isinstance(fatal, CapacityError):
        return "the notebook is full"
    if isinstance(fatal, AuthenticationRequiredError):
        return "the server needs a Google login"
    if isinstance(fatal, NotebookLMError):
        return "the server cannot be used"
    return "the state file cannot be written"


class NotTried(Exception):
    """An upload not sent because an earlier one stopped the run (`Executor.fatal`)."""


class Unit(Protocol):
    """One unit of a run's work: what it uploads, records and retires."""

    evictions: list[NoteOutcome]
    """Where the evictions made to fit this unit are reported."""

    def slots(self, remote: RemoteView) -> int:
        """The sources it adds (an upload whose exact title is listed already is adopted, not added)."""
        ...

    def begin(self) -> None:
        """It starts (room was made for it): what it needs to know of the units started before it."""
        ...

    async def retire_early(self, executor: Executor) -> bool:
        """Free one source it replaces before its uploads land (no room for add-first); False when it has none."""
        ...

    async def upload(self, executor: Executor) -> None:
        """Its uploads, through `Executor.add`.

        Raises:
            NotTried: the run stopped before an upload was sent.
            NotebookLMError: an upload failed.
        """
        ...

    async def finish(self, executor: Executor) -> list[str]:
        """Record what it did in one step (or its failure); returns the source ids it replaced, to delete."""
        ...

    async def after(self, executor: Executor) -> None:
        """What is done best-effort once its replaced sources are deleted (a retitle)."""
        ...

    def failed(self, executor: Executor, message: str) -> None:
        """It did not happen: `message` says why."""
        ...

    def not_tried(self, executor: Executor) -> None:
        """It was not tried: the run stopped before it."""
        ...


class Executor:
    """Schedules a run's units (see the module): room, add first, in-flight bounds, the first fatal error."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, protect: set[str]) -> None:
        self.deps = deps
        self.remote = remote
        self.exclude = set(protect)
        """Paths never evicted by this run (its own notes; a path is added once its eviction was tried)."""
        self.reserved = 0
        self.inflight = 0
        self.changed = anyio.Event()
        self.semaphore = anyio.Semaphore(deps.settings.concurrency)
        self.fatal: NlmsyncError | None = None
        """The error after which no upload of the run can succeed: the first one stops the run."""
        self.full = False
        """The server refused an add as full, which stopped the run."""
        self.waiting: list[Unit] = []
        """Units not started yet: they may free sources early when another needs room."""

    def occupied(self) -> int:
        return len(self.remote) + self.reserved

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def execute(self, units: Sequence[Unit], starts: Callable[[Unit], bool] = lambda unit: True,
                      ) -> BaseException | None:
        """Carry out `units` in order (`starts` false: a unit with nothing to upload, which the caller settles in
        its turn); returns the error that stopped the run, if one did."""
        self.waiting = list(units)
        stop: BaseException | None = None
        async with anyio.create_task_group() as tg:
            while self.waiting:
                unit = self.waiting.pop(0)
                if not starts(unit):
                    continue
                if self.fatal is not None:
                    unit.not_tried(self)
                    continue
                needed = unit.slots(self.remote)
                if needed:
                    try:
                        await self._make_room(needed, unit)
                    except (CapacityError, *FATAL_ERRORS) as exc:
                        stop = exc
                        break
                    except NotebookLMError as exc:
                        unit.failed(self, f"could not make room: {exc}")
                        continue
                unit.begin()
                self.reserved += needed
                self.inflight += 1
                tg.start_soon(self._carry_out, unit, needed)
        if stop is None and self.full:
            stop = self._learn_capacity()
        return stop or self.fatal

    async def _make_room(self, needed: int, unit: Unit) -> None:
        capacity = self.deps.capacity
        while self.occupied() + needed > capacity and self.inflight:
            await self.changed.wait()
        for candidate in [unit, *self.waiting]:
            while self.occupied() + needed > capacity and await candidate.retire_early(self):
                pass
            if self.occupied() + needed <= capacity:
                return
        evicted = unit.evictions
        before = len(evicted)
        try:
            await make_room(self.deps.client, self.deps.store, self.deps.notebook_id, self.remote, needed, capacity,
                            self.exclude, self.occupied, evicted)
        finally:
            for outcome in evicted[before:]:
                self.deps.progress(outcome)

    async def _carry_out(self, unit: Unit, needed: int) -> None:
        try:
            try:
                await unit.upload(self)
            except NotTried:
                unit.not_tried(self)
            except FATAL_ERRORS as exc:
                self.fatal = self.fatal or exc
                unit.failed(self, str(exc))
            except NotebookLMError as exc:
                if self.fatal is None and means_full(exc, len(self.remote)):
                    self.full = True  # no later upload can succeed: the run stops (exit 3)
                    self.fatal = full_notebook_error(self.deps.notebook_id, len(self.remote),
                                                     self.deps.capacity_limit.given)
                unit.failed(self, str(exc))
            finally:
                self.reserved -= needed
            try:
                for source_id in await unit.finish(self):
                    await self.delete_after(source_id)
                await unit.after(self)
            except NlmsyncError as exc:  # the state file cannot take what they would record: the run stops
                self.fatal = self.fatal or exc
        finally:
            self.inflight -= 1
            self._signal()

    async def add(self, text: str, title: str, adoptable: Callable[[list[str]], str | None]) -> tuple[str, bool]:
        """Upload `text` as a source titled `title`, at most `concurrency` at a time (`add_source`).

        Raises:
            NotTried: the run stopped while this add waited for its turn.
            NotebookLMError: the server refused the add, or could not be asked.
        """
        async with self.semaphore:
            if self.fatal is not None:  # queued behind an add that found the server unusable or full
                raise NotTried
            return await add_source(self.deps, self.remote, text, title, adoptable)

    async def delete_after(self, source_id: str) -> None:
        """Delete a replaced source (queued for deletion when it was replaced); on any failure it stays queued for
        a later run."""
        deps = self.deps
        try:
            await strict_delete(deps.client, deps.notebook_id, self.remote, source_id)
        except NotebookLMError:
            return
        with deps.store.step():
            deps.store.deletion_done(deps.notebook_id, source_id)

    def _learn_capacity(self) -> NlmsyncError:
        """Once the uploads under way settled, the notebook holds what the server will take: later runs keep it to
        that many sources."""
        deps, held = self.deps, len(self.remote)
        deps.store.learn_capacity(deps.notebook_id, held, deps.capacity_limit.given)
        return full_notebook_error(deps.notebook_id, held, deps.capacity_limit.given)
