"""Packs carried out: the changed packs built and titled (`build_packs`), then a `PackUnit` per group through the
run's executor — add first, then record the new packs and retire the old ones in one step, then delete them. A
pack adopted by its title alone is read back before it is deleted."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.branches import Branch
from nlmsync.sync.packs.outcomes import left_notes, pack_outcome, removed_outcome, why_uploaded
from nlmsync.sync.packs.plan import Group, Members, PlannedPack, pack_size
from nlmsync.sync.packs.text import compose_pack
from nlmsync.sync.prepared import PreparedNote, load_notes
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView, read_back, strict_delete
from nlmsync.sync.report import NoteOutcome, PackOutcome, RefreshReport
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import content_hash, pack_title, title_hash
from nlmsync.sync.units import Turn, Upload, Uploaded


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

class PackUnit:
    """A group of new packs and the sources they replace, as one unit of the run's executor (`units.Unit`)."""

    def __init__(self, groups: PackGroups, group: Group) -> None:
        self.groups = groups
        self.group = group
        self.evictions = groups.evicted
        self.pending: list[PlannedPack] = []
        """Its packs to upload (a pack the notebook holds already has its source)."""

    def start(self) -> list[Upload]:
        self.pending = [pack for pack in self.group.packs if pack.source_id is None]
        uploads = []
        for pack in self.pending:
            assert pack.text is not None  # `build_packs` built every pack of a group carried out
            uploads.append(Upload(pack.text, pack.title, self.groups.adoptable))
        return uploads

    async def retire_one(self) -> bool:
        """Free one source the group replaces before its packs land (no room for add-first); False when none is
        left."""
        if not (self.group.old_singles or self.group.old_packs):
            return False
        await self.groups.retire_early(self.group)
        return True

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        for pack in self.group.packs:
            self.groups.report(pack_outcome(pack, Branch.FAILED, error=message))

    async def finish(self, uploaded: Uploaded, turn: Turn) -> list[str]:
        if uploaded.error is not None:
            self.failed(uploaded.error)
            return []
        for pack, added in zip(self.pending, uploaded.added, strict=True):
            pack.source_id, pack.adopted = added.source_id, added.adopted
        spared = await self.groups.unproven(self.group.old_packs)
        return self.groups.record(self.group, spared)


class PackGroups:
    """What the units of a run's groups of packs share: the run's deps, listing, registry and the notes it read,
    the notebook's packed notes as the run found them (`members`), and the report each adds to (what became of
    its packs, the evictions made for them); the steps they take in the notebook and the state file."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, registry: RegistryView, read: list[NoteHashes],
                 members: Members, report: RefreshReport) -> None:
        self.deps = deps
        self.remote = remote
        self.registry = registry
        self.read = read
        self.old_members = {path: note_hash for path, (_, note_hash) in members.items()}
        self.outcomes: list[PackOutcome] = report.packs
        self.evicted: list[NoteOutcome] = report.notes

    async def retire_early(self, group: Group) -> None:
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
        spared = await self.unproven([record])
        with store.step():  # forgotten and queued in one step: a run killed before the delete finishes it later
            store.remove_pack(nb, record.source_id)
            if record.source_id in self.remote and record.source_id not in spared:
                store.queue_deletion(nb, record.source_id, f"made room for packs: {record.title}")
        if record.source_id in self.remote and record.source_id not in spared:
            await strict_delete(deps.client, nb, self.remote, record.source_id)
            with store.step():
                store.deletion_done(nb, record.source_id)

    def adoptable(self, candidates: Sequence[str]) -> str | None:
        """After a lost answer: the first listed source with the pack's title that no registry row holds."""
        store, nb = self.deps.store, self.deps.notebook_id
        return next((sid for sid in candidates if sid not in self.remote.foreign
                     and store.pack_by_source_id(nb, sid) is None and store.mapping_by_source_id(nb, sid) is None),
                    None)

    async def unproven(self, records: Sequence[PackRecord]) -> set[str]:
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

    def report(self, outcome: PackOutcome) -> None:
        self.outcomes.append(outcome)
        self.deps.progress(outcome)

    def record(self, group: Group, spared: Collection[str] = ()) -> list[str]:
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
        branch = Branch.REPLACED if group.old_packs or group.old_singles or group.retired or group.replacing \
            else Branch.ADDED
        old_ids = [sid for sid in old_ids if sid not in kept]
        for i, pack in enumerate(group.packs):
            if pack.source_id in held_ids:
                self.report(pack_outcome(pack, Branch.REUSED))
                continue
            self.report(pack_outcome(pack, branch, previous_source_ids=old_ids if i == 0 else [],
                                      reason=why_uploaded(pack, group, self.old_members, left if i == 0 else ())))
        if not group.packs:
            for record in group.old_packs:
                self.report(removed_outcome(record))
        return retire

def _heir(members: Sequence[tuple[str, str]], successor: dict[str, str]) -> str | None:
    """The new pack holding most of an old pack's notes (the first of them on a tie)."""
    counts: dict[str, int] = {}
    for path, _ in members:
        heir = successor.get(path)
        if heir is not None:
            counts[heir] = counts.get(heir, 0) + 1
    return max(counts, key=lambda sid: counts[sid]) if counts else None
