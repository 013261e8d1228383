"""Packed notebooks, carried out: the changed packs built (`build_packs`: their notes read, text composed and
titled) and uploaded group by group (`PackRunner`): add first, then record the new packs and retire the old
sources in one step, then delete them. When there is no room for add-first, groups wait for the ones under way
(waves), then retire their old sources early, then evict managed single-note sources. A pack adopted from the
notebook by its title alone is read back before it is deleted: one that is not nlmsync's is never deleted."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import anyio

from nlmsync.errors import CapacityError, NlmsyncError, NotebookLMError
from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.adopt import read_back
from nlmsync.sync.decide import RegistryView, load_notes
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.eviction import full_notebook_error, make_room, means_full, strict_delete
from nlmsync.sync.pack_outcomes import left_notes, pack_outcome, removed_outcome, why_uploaded
from nlmsync.sync.pack_plan import Group, Members, PlannedPack, pack_size
from nlmsync.sync.pack_text import compose_pack
from nlmsync.sync.plan import Branch, PreparedNote
from nlmsync.sync.reconcile import RemoteView
from nlmsync.sync.report import NoteOutcome, PackOutcome, stop_report
from nlmsync.sync.runner import add_source
from nlmsync.sync.titles import content_hash, pack_title, title_hash


def build_packs(deps: SyncDeps, packs: Sequence[PlannedPack], remote: RemoteView, found: Collection[str],
                read: list[NoteHashes]) -> dict[int, str]:
    """Build and title each of `packs` (changed packs): its notes read, its text composed. A live pack of the
    state file's with that very title holds it already (adopted at an older version of its notes, which the
    vault has caught up with since): it is kept, not uploaded again. Returns, by position in `packs`, the error
    of a pack that could not be built (a note became unreadable)."""
    store, nb = deps.store, deps.notebook_id
    errors: dict[int, str] = {}
    for i, pack in enumerate(packs):
        problem = _read_texts(deps, pack, found, read)
        if problem is not None:
            errors[i] = problem
            continue
        pack.text = compose_pack([(n.path, n.note.parts[0].text or "") for n in pack.notes])
        pack.content_hash = content_hash(pack.text)
        pack.title = pack_title(pack.notes[0].path, pack.notes[-1].path, len(pack.notes), title_hash(pack.text))
        pack.source_id = next((sid for sid in remote.titled(pack.title)
                               if (held := store.pack_by_source_id(nb, sid)) is not None and held.title == pack.title),
                              None)
    return errors

def _read_texts(deps: SyncDeps, pack: PlannedPack, found: Collection[str], read: list[NoteHashes]) -> str | None:
    """Read the notes of `pack` known only by their stat; an error line when one cannot be read any more."""
    missing = [n for n in pack.notes if n.note.parts[0].text is None]
    if not missing:
        return None
    loaded = {item.path: item for item in load_notes(deps, [n.path for n in missing], found, read=read)}
    for note in missing:
        item = loaded[note.path]
        if not isinstance(item, PreparedNote) or len(item.parts) != 1:
            why = item.reason or item.error if isinstance(item, NoteOutcome) else "too large for a pack now"
            return f"{note.path}: {why}"
        note.note = item
        note.size = len((item.parts[0].text or "").encode("utf-8", "surrogateescape"))
    return None

class _NotTried(Exception):
    """An add not sent because an earlier one stopped the run (`PackRunner.fatal`)."""

class PackRunner:
    """Carries out the groups: add first, record and retire in one step, then delete the old sources."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, registry: RegistryView, read: list[NoteHashes],
                 protect: set[str], members: Members) -> None:
        self.deps = deps
        self.remote = remote
        self.registry = registry
        self.read = read
        self.protect = protect
        self.old_members = {path: note_hash for path, (_, note_hash) in members.items()}
        self.outcomes: list[PackOutcome] = []
        self.evicted: list[NoteOutcome] = []
        self.fatal: BaseException | None = None
        self.reserved = 0
        self.inflight = 0
        self.changed = anyio.Event()
        self.semaphore = anyio.Semaphore(deps.settings.concurrency)
        self.waiting: list[Group] = []
        """Groups not started yet: their old sources may go early when an add needs room."""

    def occupied(self) -> int:
        return len(self.remote) + self.reserved

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def run(self, groups: list[Group]) -> None:
        self.waiting = list(groups)
        stop: BaseException | None = None
        async with anyio.create_task_group() as tg:
            while self.waiting:
                group = self.waiting.pop(0)
                if self.fatal is not None:
                    break
                needed = sum(1 for p in group.packs if p.source_id is None)
                try:
                    await self._make_room(needed, group)
                except (CapacityError, *FATAL_ERRORS) as exc:
                    stop = exc
                    break
                except NotebookLMError as exc:
                    self._fail(group, f"could not make room: {exc}")
                    continue
                self.reserved += needed
                self.inflight += 1
                tg.start_soon(self._carry_out, group, needed)
        stop = stop or self.fatal
        if isinstance(stop, NlmsyncError):
            stop_report(stop, self.deps.notebook_id, list(self.evicted))
        if stop is not None:
            raise stop

    async def _make_room(self, needed: int, group: Group) -> None:
        """Room for `needed` adds: wait for groups under way; then retire early the old sources of this group
        and of those not started yet; then evict managed single-note sources."""
        capacity = self.deps.capacity
        while self.occupied() + needed > capacity and self.inflight:
            await self.changed.wait()
        for candidate in [group, *self.waiting]:
            while self.occupied() + needed > capacity and (candidate.old_singles or candidate.old_packs):
                await self._retire_early(candidate)
            if self.occupied() + needed <= capacity:
                return
        await make_room(self.deps.client, self.deps.store, self.deps.notebook_id, self.remote, needed, capacity,
                        set(self.protect), self.occupied, self.evicted)

    async def _retire_early(self, group: Group) -> None:
        """Delete one old source of `group` before its new packs land (there is no room for add-first)."""
        deps, store, nb = self.deps, self.deps.store, self.deps.notebook_id
        if group.old_singles:
            path = group.old_singles.pop(0)
            group.retired.extend(resolved for _, resolved in self.registry.mappings(path))
            for row, resolved in self.registry.mappings(path):
                if resolved in self.remote:
                    await strict_delete(deps.client, nb, self.remote, resolved)
                with store.step():
                    store.record_eviction(nb, path, resolved, "made room for packs")
            self.registry.by_path[path] = []
            return
        record = group.old_packs.pop(0)
        group.retired.append(record.source_id)
        spared = await self._unproven([record])
        with store.step():  # forgotten and queued in one step: a run killed before the delete finishes it later
            store.remove_pack(nb, record.source_id)
            if record.source_id in self.remote and record.source_id not in spared:
                store.queue_deletion(nb, record.source_id, f"made room for packs: {record.title}")
        if record.source_id in self.remote and record.source_id not in spared:
            await strict_delete(deps.client, nb, self.remote, record.source_id)
            with store.step():
                store.deletion_done(nb, record.source_id)

    def _report(self, outcome: PackOutcome) -> None:
        self.outcomes.append(outcome)
        self.deps.progress(outcome)

    def _fail(self, group: Group, message: str) -> None:
        for pack in group.packs:
            self._report(pack_outcome(pack, Branch.FAILED, error=message))

    async def _carry_out(self, group: Group, needed: int) -> None:
        deps, store, nb = self.deps, self.deps.store, self.deps.notebook_id
        try:
            try:
                for pack in group.packs:
                    if pack.source_id is None:
                        await self._add(pack)
            except _NotTried:
                self._fail(group, "not tried: the run stopped")
                return
            except FATAL_ERRORS as exc:
                self.fatal = self.fatal or exc
                self._fail(group, str(exc))
                return
            except NotebookLMError as exc:
                if self.fatal is None and means_full(exc, len(self.remote)):  # no later add can succeed: stop
                    deps.store.learn_capacity(nb, len(self.remote), deps.capacity_limit.given)
                    self.fatal = full_notebook_error(nb, len(self.remote), deps.capacity_limit.given)
                self._fail(group, str(exc))
                return
            finally:
                self.reserved -= needed
            spared = await self._unproven(group.old_packs)
            retire = self._record(group, spared)
            for source_id in retire:
                try:
                    await strict_delete(deps.client, nb, self.remote, source_id)
                except NotebookLMError:
                    continue
                with store.step():
                    store.deletion_done(nb, source_id)
        finally:
            self.inflight -= 1
            self._signal()

    async def _add(self, pack: PlannedPack) -> None:
        deps = self.deps
        assert pack.text is not None
        async with self.semaphore:
            if self.fatal is not None:  # queued behind an add that found the server unusable or full
                raise _NotTried
            pack.source_id, pack.adopted = await add_source(deps, self.remote, pack.text, pack.title, self._adoptable)

    def _adoptable(self, candidates: list[str]) -> str | None:
        """After a lost answer: the first listed source with the pack's title that no registry row holds."""
        store, nb = self.deps.store, self.deps.notebook_id
        return next((sid for sid in candidates if sid not in self.remote.foreign
                     and store.pack_by_source_id(nb, sid) is None and store.mapping_by_source_id(nb, sid) is None),
                    None)

    async def _unproven(self, records: Sequence[PackRecord]) -> set[str]:
        """The old packs of `records` that are not to be deleted: adopted from the notebook by their title alone,
        they are read back first, and one that does not hold what its title says is not nlmsync's (left alone,
        and not read again), or one the server cannot say about now is left for a later run to prove."""
        spared: set[str] = set()
        store, nb = self.deps.store, self.deps.notebook_id
        for record in records:
            if record.proven or record.source_id not in self.remote:
                continue
            verdict = await read_back(self.deps.client, record.source_id, record.title)
            if verdict:
                continue
            spared.add(record.source_id)
            if verdict is False:
                self.remote.foreign[record.source_id] = record.title
                store.record_unmanaged(nb, {record.source_id: record.title})
        return spared

    def _record(self, group: Group, spared: Collection[str] = ()) -> list[str]:
        """Record the group's new packs and retire its old sources in one step (but `spared`, which are only
        forgotten); returns the ids to delete."""
        store, nb = self.deps.store, self.deps.notebook_id
        retire: list[str] = []
        successor = {path: pack.source_id for pack in group.packs for path in pack.paths if pack.source_id}
        paths = group.paths()
        read = [r for r in self.read if r.path in paths]
        old_ids = [*group.retired, *(r.source_id for r in group.old_packs)]
        left = left_notes(store, nb, group)
        kept = {pack.source_id for pack in group.packs}
        held_ids = {r.source_id for r in group.old_packs}
        with store.step():
            for record in group.old_packs:
                heir = _heir(store.notes_of_pack(nb, record.source_id), successor)
                store.remove_pack(nb, record.source_id)
                if record.source_id in kept:  # it holds one of the new packs already (`build_packs`)
                    continue
                if record.source_id in self.remote and record.source_id not in spared:
                    retire.append(record.source_id)
                    store.queue_deletion(nb, record.source_id, f"pack replaced: {record.title}")
                if heir is not None:
                    store.register_source_alias(record.source_id, heir)
            for path in group.old_singles:
                for row in store.mappings_by_path(nb, path):
                    resolved = store.resolve_source_id(row.source_id)
                    old_ids.append(resolved)
                    if resolved in self.remote and resolved not in retire:
                        retire.append(resolved)
                        store.queue_deletion(nb, resolved, f"{path} moved into a pack")
                    if path in successor:
                        store.register_source_alias(resolved, successor[path])
                store.remove_mappings(nb, path)
            for pack in group.packs:
                assert pack.source_id is not None
                store.record_pack(PackRecord(nb, pack.source_id, pack.content_hash, pack.title, pack.paths[0],
                                             pack.paths[-1], len(pack.notes), pack_size(pack)), pack.members())
            store.record_note_hashes(read)
        branch = Branch.REPLACED if group.old_packs or group.old_singles or group.retired else Branch.ADDED
        old_ids = [sid for sid in old_ids if sid not in kept]
        for i, pack in enumerate(group.packs):
            if pack.source_id in held_ids:
                self._report(pack_outcome(pack, Branch.REUSED))
                continue
            self._report(pack_outcome(pack, branch, previous_source_ids=old_ids if i == 0 else [],
                                      reason=why_uploaded(pack, group, self.old_members, left if i == 0 else ())))
        if not group.packs:
            for record in group.old_packs:
                self._report(removed_outcome(record))
        return retire

def _heir(members: Sequence[tuple[str, str]], successor: dict[str, str]) -> str | None:
    """The new pack holding most of an old pack's notes (the first of them on a tie)."""
    counts: dict[str, int] = {}
    for path, _ in members:
        heir = successor.get(path)
        if heir is not None:
            counts[heir] = counts.get(heir, 0) + 1
    return max(counts, key=lambda sid: counts[sid]) if counts else None
