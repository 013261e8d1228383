"""Packed notebooks: the §5 branches for sources that hold many notes (packs).

A run over packed notes, in order:

1. **Layout** (`pack_layout.plan_layout`): the notes in path order, cut into packs at the starts of the packs
   the notebook holds, new boundaries content-defined, within the per-source limit and the budget of sources
   left once hand-added sources, notes that stay alone and `pack_free` are counted.
2. **Decision**, per planned pack: *reused* when the notebook holds a live pack of exactly these notes with
   exactly these texts (known by the notes' recorded hashes: an idle run reads nothing); otherwise its text is
   built and titled (first and last note, count, content hash) and it is *adopted* when a source with that
   exact title is listed and is nlmsync's own (an add of this run's plan that a killed run left behind), else
   *added*.
3. **Groups**: a new pack and the older sources it replaces (packs that held its notes, the sources of its
   notes uploaded alone) are one group, joined with every other new pack that replaces one of them.
4. **Add first, then retire** (§5.2 for packs), group by group: each new pack's title is recorded as under way
   (`StateStore.start_pack_add`) and the pack uploaded; then, in one step, the new packs are recorded, the old
   ones forgotten and queued for deletion (their ids aliased to their successors, so a conversation's
   carried-over sources still resolve); then the old sources are deleted. A run killed anywhere leaves the
   registry before or after a group, and the next run plans the same packs (same notes, same boundaries) and
   adopts what was already uploaded; a source whose add was under way and which no plan adopts is deleted.

Packs are never evicted: when an add needs room, the sources the run is retiring go first (a note's older
source before its pack lands), then managed single-note sources by the eviction queue (§6).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from nlmsync.errors import CapacityError, NlmsyncError, NotebookLMError
from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.decide import RegistryView, load_notes
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.eviction import CAPACITY_HINT, full_notebook_error, make_room, means_full, strict_delete
from nlmsync.sync.identity import holds_text
from nlmsync.sync.pack_layout import NotesDoNotFit, PackNote, plan_layout
from nlmsync.sync.pack_text import block_size, compose_pack
from nlmsync.sync.plan import Branch, PreparedNote
from nlmsync.sync.reconcile import RemoteView
from nlmsync.sync.report import NoteOutcome, PackOutcome, SourcesLayout, stop_report
from nlmsync.sync.runner import add_source
from nlmsync.sync.titles import content_hash, pack_title, title_hash

if TYPE_CHECKING:
    from nlmsync.store import StateStore

PACK_TARGET_BYTES = 250_000
"""The size a vault's first layout aims its packs at when the budget allows that many: small enough that an
edit re-uploads little and a question's packs stay focused, large enough that a vault goes up in few adds."""

_SHOWN_IN_REASON = 3

Members = dict[str, tuple[str, str]]
"""Each packed note of the notebook as a run found it: path -> (its pack's source id, its hash in the pack);
read once per run (`StateStore.pack_members`), before the run changes any pack."""


def sources_layout(store: StateStore, notebook_id: str, remote: RemoteView) -> SourcesLayout:
    """How the notebook's live sources hold notes: notes alone, packs, and the notes the packs hold."""
    alone = {m.path for m, resolved in store.mappings_with_resolved_ids(notebook_id) if resolved in remote}
    live = [p for p in store.packs(notebook_id) if p.source_id in remote]
    return SourcesLayout(alone_note_count=len(alone), pack_count=len(live),
                         packed_note_count=sum(p.note_count for p in live))


def pack_limit(deps: SyncDeps) -> int:
    """The bytes one pack may hold: the per-source limit in bytes, and in words (a word takes at least two
    bytes with its separator, so a pack within twice the word limit in bytes is within the word limit)."""
    return min(deps.max_bytes, 2 * deps.max_words)


def packable(deps: SyncDeps, note: PreparedNote, size: int) -> bool:
    """Whether a note goes into a pack: one part, and small enough for a pack of its own."""
    return len(note.parts) == 1 and block_size(note.path, size) <= pack_limit(deps)


@dataclass
class PackedNote:
    """A note of a packed run: prepared (text None when known by its stat) and its size in bytes."""

    note: PreparedNote
    size: int

    @property
    def path(self) -> str:
        return self.note.path

    @property
    def note_hash(self) -> str:
        return self.note.parts[0].content_hash


@dataclass
class PlannedPack:
    """One pack of the layout and what becomes of it."""

    notes: list[PackedNote]
    keep: PackRecord | None = None
    """The live pack reused as it is."""
    text: str | None = None
    content_hash: str = ""
    title: str = ""
    source_id: str | None = None
    adopted: bool = False

    @property
    def paths(self) -> list[str]:
        return [n.path for n in self.notes]

    def members(self) -> list[tuple[str, str]]:
        return [(n.path, n.note_hash) for n in self.notes]


@dataclass
class Group:
    """New packs and the older sources they replace, carried out together."""

    packs: list[PlannedPack] = field(default_factory=list)
    old_packs: list[PackRecord] = field(default_factory=list)
    old_singles: list[str] = field(default_factory=list)
    """Paths whose single-note sources the new packs replace."""

    def paths(self) -> set[str]:
        return {p for pack in self.packs for p in pack.paths} | set(self.old_singles)


@dataclass
class PackRun:
    """What a packed run did: the packs, and per note of the run the pack it is live in."""

    packs: list[PackOutcome] = field(default_factory=list)
    notes: list[NoteOutcome] = field(default_factory=list)


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, key: str) -> str:
        self.parent.setdefault(key, key)
        while self.parent[key] != key:
            self.parent[key] = self.parent[self.parent[key]]
            key = self.parent[key]
        return key

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def packed_notes(deps: SyncDeps, notes: Sequence[PreparedNote], known: dict[str, NoteHashes]) -> list[PackedNote]:
    """`notes` with their sizes (the text's when read, else the file size recorded with the hashes), in path order."""
    out = [PackedNote(n, len(n.parts[0].text.encode("utf-8", "surrogateescape")) if n.parts[0].text is not None
                      else known[n.path].size) for n in notes]
    return sorted(out, key=lambda n: n.path)


@dataclass(frozen=True)
class Room:
    """The sources a layout may use: the notebook's capacity, less `pack_free`, the sources that stay (hand-added
    sources, look-alikes, single-note sources the run keeps) and the parts still to add of notes kept alone."""

    capacity: int
    free: int
    staying: int
    alone_parts: int

    @property
    def budget(self) -> int:
        return self.capacity - self.free - self.staying - self.alone_parts


def room_for_packs(deps: SyncDeps, remote: RemoteView, registry: RegistryView, retiring_paths: Collection[str],
                   alone_parts: int) -> Room:
    """The room a layout has: the single-note sources of `retiring_paths` (notes going into packs, or leaving
    the notebook) and the packs themselves make room; every other listed source stays."""
    store, nb = deps.store, deps.notebook_id
    pack_ids = {p.source_id for p in store.packs(nb)}
    registry.read_all()
    retiring = {resolved for path in retiring_paths for _, resolved in registry.mappings(path)}
    staying = sum(1 for sid in remote.sources if sid not in pack_ids and sid not in retiring)
    return Room(deps.capacity, deps.settings.pack_free, staying, alone_parts)


def does_not_fit(deps: SyncDeps, room: Room, error: NotesDoNotFit, notes: Sequence[PackedNote]) -> CapacityError:
    """The capacity error of a layout that does not fit, saying by how much."""
    size = sum(block_size(n.path, n.size) for n in notes)
    needed = error.needed + room.alone_parts
    have = room.capacity - room.free - room.staying
    alone = (f" and {room.alone_parts} for notes too large for a pack" if room.alone_parts else "")
    staying = f", {room.staying} taken by sources that stay" if room.staying else ""
    short = needed - have
    return CapacityError(
        f"the {len(notes)} notes ({size:,} bytes) need at least {error.needed} "
        f"{'pack' if error.needed == 1 else 'packs'} of at most {pack_limit(deps):,} bytes{alone}, but notebook "
        f"{deps.notebook_id} has room for {max(have, 0)} (capacity {room.capacity}, {room.free} left free by "
        f"'pack_free'{staying}): {short} {'source' if short == 1 else 'sources'} short; nothing was uploaded",
        hint=CAPACITY_HINT)


def packs_in_reach(records: Sequence[PackRecord], paths: Collection[str]) -> list[PackRecord]:
    """The packs (of `records`, in path order) whose ranges hold some of `paths`: where those notes are, or go."""
    starts = [r.first_path for r in records]
    reach = {max(bisect_right(starts, path) - 1, 0) for path in paths} if records else set()
    return [records[i] for i in sorted(reach)]


def plan_packs(deps: SyncDeps, notes: list[PackedNote], budget: int, members: Members,
               within: Sequence[PackRecord] | None = None) -> list[PlannedPack]:
    """The layout of `notes` (path order) as planned packs, keeping the ranges of the packs the notebook holds
    (or of the packs `within`, when the notes are theirs alone); a planned pack with exactly the notes and texts
    of a live pack keeps it (`keep`). `members`: what `StateStore.pack_members` says of the notebook.

    Raises:
        NotesDoNotFit: more than `budget` packs are needed.
    """
    store, nb = deps.store, deps.notebook_id
    records = {p.source_id: p for p in store.packs(nb)}
    ranges = within if within is not None else list(records.values())
    layout = plan_layout([PackNote(n.path, block_size(n.path, n.size)) for n in notes],
                         [p.first_path for p in ranges], max_bytes=pack_limit(deps), budget=budget,
                         target_bytes=PACK_TARGET_BYTES)
    held: dict[str, list[tuple[str, str]]] = {}
    for path, (source_id, note_hash) in sorted(members.items()):
        held.setdefault(source_id, []).append((path, note_hash))
    starting = {members[0][0]: source_id for source_id, members in held.items()}
    planned = [PlannedPack(notes[a:b]) for a, b in layout]
    for pack in planned:
        record = records.get(starting.get(pack.paths[0], ""))
        if record is not None and held[record.source_id] == pack.members():
            pack.keep = record
            pack.source_id = record.source_id
    return planned


async def build_packs(deps: SyncDeps, packs: Sequence[PlannedPack], remote: RemoteView, found: Collection[str],
                      read: list[NoteHashes]) -> dict[int, str]:
    """Build, title and look for each of `packs` (changed packs): its notes read, its text composed, a listed
    source with its exact title adopted when it is nlmsync's own (its add was under way, or it holds the very
    text). Returns, by position in `packs`, the error of a pack that could not be built (a note became
    unreadable)."""
    store, nb = deps.store, deps.notebook_id
    adds_under_way = set(store.pack_adds(nb))
    errors: dict[int, str] = {}
    for i, pack in enumerate(packs):
        problem = _read_texts(deps, pack, found, read)
        if problem is not None:
            errors[i] = problem
            continue
        pack.text = compose_pack([(n.path, n.note.parts[0].text or "") for n in pack.notes])
        pack.content_hash = content_hash(pack.text)
        pack.title = pack_title(pack.notes[0].path, pack.notes[-1].path, len(pack.notes), title_hash(pack.text))
        for candidate in remote.titled(pack.title):
            if store.pack_by_source_id(nb, candidate) is not None or store.mapping_by_source_id(nb, candidate):
                continue
            if pack.title in adds_under_way or await holds_text(deps.client, candidate, pack.text):
                pack.source_id, pack.adopted = candidate, True
                break
            remote.foreign[candidate] = pack.title
    return errors


async def settle_pack_adds(deps: SyncDeps, remote: RemoteView, planned: Sequence[PlannedPack]) -> None:
    """Delete what earlier pack adds left behind: a source titled as an add under way that no registry row holds
    and this run does not adopt (a run killed between the add and its record, with a plan that changed since;
    or a copy of a pack whose lost add answer landed late). The titles this run does not plan are settled."""
    store, nb = deps.store, deps.notebook_id
    adopted = {p.source_id for p in planned if p.adopted}
    titles = {p.title for p in planned}
    settled: list[str] = []
    for title in store.pack_adds(nb):
        strays = [sid for sid in remote.titled(title) if sid not in adopted
                  and store.pack_by_source_id(nb, sid) is None and store.mapping_by_source_id(nb, sid) is None]
        for source_id in strays:
            with store.step():
                store.queue_deletion(nb, source_id, f"left by an interrupted upload: {title}")
            try:
                await strict_delete(deps.client, nb, remote, source_id)
            except FATAL_ERRORS:
                raise
            except NotebookLMError:
                continue
            with store.step():
                store.deletion_done(nb, source_id)
        if title not in titles:
            settled.append(title)
    store.end_pack_adds(nb, settled)


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


def group_changes(deps: SyncDeps, planned: Sequence[PlannedPack], registry: RegistryView, members: Members,
                  gone: Collection[str] = ()) -> list[Group]:
    """The changed packs of `planned` (not kept) with the older sources they replace, as groups in path order,
    and a group of its own for each held pack whose notes all left the layout or are `gone` (a held note that is
    in no planned pack: deleted, excluded, or now too large for a pack)."""
    store, nb = deps.store, deps.notebook_id
    records = {p.source_id: p for p in store.packs(nb)}
    holder = {path: source_id for path, (source_id, _) in members.items()}
    kept = {p.keep.source_id for p in planned if p.keep is not None}
    union = _Union()
    changed = [p for p in planned if p.keep is None]
    for i, pack in enumerate(changed):
        union.find(f"new:{i}")
        for path in pack.paths:
            old = holder.get(path)
            if old is not None and old not in kept:
                union.join(f"new:{i}", f"old:{old}")
            if any(m.managed for m, _ in registry.mappings(path)):
                union.join(f"new:{i}", f"single:{path}")
    for path in gone:
        old = holder.get(path)
        if old is not None and old not in kept and old in records:
            union.find(f"old:{old}")
    groups: dict[str, Group] = {}
    for i, pack in enumerate(changed):
        groups.setdefault(union.find(f"new:{i}"), Group()).packs.append(pack)
    for key in list(union.parent):
        root = union.find(key)
        kind, _, name = key.partition(":")
        if kind == "old" and name in records:
            groups.setdefault(root, Group()).old_packs.append(records[name])
        elif kind == "single":
            groups.setdefault(root, Group()).old_singles.append(name)
    return sorted(groups.values(), key=_group_order)


def _group_order(group: Group) -> str:
    firsts = [p.paths[0] for p in group.packs] + [p.first_path for p in group.old_packs] + group.old_singles
    return min(firsts)


def _why(pack: PlannedPack, group: Group, old_members: dict[str, str], left: Sequence[str] = ()) -> str:
    """Why a pack is uploaded, in words: which of its notes changed, are new, were alone before, or left it."""
    changed, new, alone = [], [], []
    singles = set(group.old_singles)
    for note in pack.notes:
        before = old_members.get(note.path)
        if note.path in singles:
            alone.append(note.path)
        elif before is None:
            new.append(note.path)
        elif before != note.note_hash:
            changed.append(note.path)
    parts = [_listed(f"{len(changed)} changed", changed), _listed(f"{len(new)} new", new),
             _listed(f"{len(alone)} alone before", alone), _listed(f"{len(left)} left", list(left))]
    said = "; ".join(p for p in parts if p)
    return said or "its notes moved between packs"


def _listed(head: str, paths: list[str]) -> str:
    if not paths:
        return ""
    shown = ", ".join(paths[:_SHOWN_IN_REASON])
    more = f", … ({len(paths) - _SHOWN_IN_REASON} more)" if len(paths) > _SHOWN_IN_REASON else ""
    return f"{head}: {shown}{more}"


def pack_outcome(pack: PlannedPack, branch: Branch, *, previous_source_ids: Sequence[str] = (),
                 reason: str | None = None, error: str | None = None) -> PackOutcome:
    title = pack.title or (pack.keep.title if pack.keep is not None else "")
    return PackOutcome(branch=branch, title=title, source_id=pack.source_id, paths=pack.paths, byte_count=_size(pack),
                       adopted=pack.adopted, previous_source_ids=list(previous_source_ids), reason=reason,
                       error=error)


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
        and of those not started yet; then evict managed single-note sources (§6)."""
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
            for row, resolved in self.registry.mappings(path):
                if resolved in self.remote:
                    await strict_delete(deps.client, nb, self.remote, resolved)
                with store.step():
                    store.record_eviction(nb, path, resolved, "made room for packs")
            self.registry.by_path[path] = []
            return
        record = group.old_packs.pop(0)
        if record.source_id in self.remote:
            await strict_delete(deps.client, nb, self.remote, record.source_id)
        with store.step():
            store.remove_pack(nb, record.source_id)

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
            retire = self._record(group)
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
            with deps.store.step():
                deps.store.start_pack_add(deps.notebook_id, pack.title)
            pack.source_id, pack.adopted = await add_source(deps, self.remote, pack.text, pack.title, self._adoptable)

    def _adoptable(self, candidates: list[str]) -> str | None:
        """After a lost answer: the first listed source with the pack's title that no registry row holds."""
        store, nb = self.deps.store, self.deps.notebook_id
        return next((sid for sid in candidates if sid not in self.remote.foreign
                     and store.pack_by_source_id(nb, sid) is None and store.mapping_by_source_id(nb, sid) is None),
                    None)

    def _record(self, group: Group) -> list[str]:
        """Record the group's new packs and retire its old sources in one step; returns the ids to delete."""
        store, nb = self.deps.store, self.deps.notebook_id
        retire: list[str] = []
        successor = {path: pack.source_id for pack in group.packs for path in pack.paths if pack.source_id}
        paths = group.paths()
        read = [r for r in self.read if r.path in paths]
        old_ids = [r.source_id for r in group.old_packs]
        left = _left(store, nb, group)
        with store.step():
            for record in group.old_packs:
                heir = _heir(store.notes_of_pack(nb, record.source_id), successor)
                store.remove_pack(nb, record.source_id)
                if record.source_id in self.remote:
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
                                             pack.paths[-1], len(pack.notes), _size(pack)), pack.members())
            store.record_note_hashes(read)
        branch = Branch.REPLACED if group.old_packs or group.old_singles else Branch.ADDED
        for i, pack in enumerate(group.packs):
            self._report(pack_outcome(pack, branch, previous_source_ids=old_ids if i == 0 else [],
                                      reason=_why(pack, group, self.old_members, left if i == 0 else ())))
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


def _size(pack: PlannedPack) -> int:
    if pack.text is not None:
        return len(pack.text.encode("utf-8", "surrogateescape"))
    return pack.keep.size if pack.keep is not None else 0


def held_pack_outcome(record: PackRecord, paths: list[str]) -> PackOutcome:
    """A pack a run left as it is (no change in its range), reported reused with its notes in order."""
    return PackOutcome(branch=Branch.REUSED, title=record.title, source_id=record.source_id, paths=paths,
                       byte_count=record.size)


def removed_outcome(record: PackRecord) -> PackOutcome:
    return PackOutcome(branch=Branch.REMOVED, title=record.title, source_id=record.source_id, byte_count=record.size,
                       reason="its notes left the notebook's packs")


def live_note_outcomes(planned: Sequence[PlannedPack], outcomes: Sequence[PackOutcome],
                       paths: Collection[str]) -> list[NoteOutcome]:
    """Per note of `paths` held by a planned pack: the pack it is live in (its branch), or the pack's failure."""
    by_pack = {id(p): p for p in planned}
    result_of = {tuple(o.paths): o for o in outcomes}
    notes: list[NoteOutcome] = []
    for pack in by_pack.values():
        outcome = result_of.get(tuple(pack.paths))
        for path in pack.paths:
            if path not in paths:
                continue
            if outcome is not None and outcome.branch == Branch.FAILED:
                notes.append(NoteOutcome(path=path, branch=Branch.FAILED, error=outcome.error))
            elif pack.source_id is not None:
                branch = outcome.branch if outcome is not None else Branch.REUSED
                notes.append(NoteOutcome(path=path, branch=branch, source_ids=[pack.source_id],
                                         pack=pack.title or (pack.keep.title if pack.keep else None)))
    return notes


async def ensure_packs(deps: SyncDeps, remote: RemoteView, registry: RegistryView, notes: list[PackedNote],
                       members: Members, *,
                       wanted: Callable[[Group], bool] | None = None, shown: Callable[[PlannedPack], bool],
                       gone: Collection[str] = (), alone_parts: int = 0, leaving: Collection[str] = (),
                       found: Collection[str] = (),
                       read: list[NoteHashes], protect: set[str], report_notes: Collection[str] = (),
                       within: Sequence[PackRecord] | None = None, dry_run: bool = False) -> PackRun:
    """Make the packed `notes` (path order) live in their packs: plan the layout, decide each pack, carry out the
    groups `wanted` accepts (all with None), or in a dry run say what would be done.

    Reports every pack whose group is carried out, and the kept packs `shown` accepts; per note of
    `report_notes` the pack it is live in (or why not). With `within`, `notes` are the notes of those packs'
    ranges alone (a run over a few notes: `ask`, `refresh PATH`), laid out in the room the other packs leave.

    Raises:
        CapacityError: the layout needs more packs than there is room for (nothing was uploaded), or no room
            could be made for an add.
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server cannot be
            used (what was done before is recorded and carried in the error's report).
    """
    room = room_for_packs(deps, remote, registry, [*(n.path for n in notes), *leaving], alone_parts)
    if within is not None:
        inside = {r.source_id for r in within}
        elsewhere = sum(1 for p in deps.store.packs(deps.notebook_id) if p.source_id in remote and p.source_id not in inside)
        room = Room(room.capacity, room.free, room.staying + elsewhere, room.alone_parts)
    try:
        planned = plan_packs(deps, notes, room.budget, members, within)
    except NotesDoNotFit as exc:
        raise does_not_fit(deps, room, exc, notes) from None
    groups = [g for g in group_changes(deps, planned, registry, members, gone) if wanted is None or wanted(g)]
    changed = [p for g in groups for p in g.packs]
    errors = await build_packs(deps, changed, remote, found, read)
    if not dry_run and wanted is None:
        await settle_pack_adds(deps, remote, changed)
    broken = {id(changed[i]): message for i, message in errors.items()}
    run = PackRun()
    failed = [g for g in groups if any(id(p) in broken for p in g.packs)]
    for group in failed:
        message = next(broken[id(p)] for p in group.packs if id(p) in broken)
        run.packs.extend(pack_outcome(p, Branch.FAILED, error=f"could not be built: {message}") for p in group.packs)
    groups = [g for g in groups if g not in failed]
    run.packs.extend(pack_outcome(p, Branch.REUSED) for p in planned if p.keep is not None and shown(p))
    if dry_run:
        run.packs.extend(_simulated(deps, groups, members))
    else:
        deps.phase("uploading packs", sum(len(g.packs) for g in groups))
        runner = PackRunner(deps, remote, registry, read, protect, members)
        try:
            await runner.run(groups)
        except NlmsyncError as exc:
            stop_report(exc, deps.notebook_id, runner.evicted, [*run.packs, *runner.outcomes])
            raise
        run.packs.extend(runner.outcomes)
        run.notes.extend(runner.evicted)
    run.packs.sort(key=lambda o: o.paths[0] if o.paths else o.title)
    run.notes.extend(live_note_outcomes(planned, run.packs, set(report_notes)))
    return run


def _left(store: StateStore, notebook_id: str, group: Group) -> list[str]:
    """The notes of a group's old packs that none of its new packs holds (deleted, excluded, alone now)."""
    kept = {p for pack in group.packs for p in pack.paths}
    return sorted(p for r in group.old_packs for p, _ in store.notes_of_pack(notebook_id, r.source_id)
                  if p not in kept)


def _simulated(deps: SyncDeps, groups: Sequence[Group], members: Members) -> list[PackOutcome]:
    """What carrying out `groups` would do (a dry run)."""
    store, nb = deps.store, deps.notebook_id
    old_members = {path: note_hash for path, (_, note_hash) in members.items()}
    outcomes: list[PackOutcome] = []
    for group in groups:
        branch = Branch.REPLACED if group.old_packs or group.old_singles else Branch.ADDED
        previous = [r.source_id for r in group.old_packs]
        left = _left(store, nb, group)
        for i, pack in enumerate(group.packs):
            outcomes.append(pack_outcome(pack, branch, previous_source_ids=previous if i == 0 else [],
                                         reason=_why(pack, group, old_members, left if i == 0 else ())))
        if not group.packs:
            outcomes.extend(removed_outcome(r) for r in group.old_packs)
    return outcomes
