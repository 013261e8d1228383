"""Packed notebooks, the plan: which notes share a pack (`plan_packs`, over the pure `layout.plan_layout`),
the room a layout has (`room_for_packs`), and which changed packs replace which older sources (`group_changes`).

Nothing here calls the server: a plan is decided from the notes, the registry and the run's listing."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from nlmsync.errors import CapacityError
from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.capacity import CAPACITY_HINT
from nlmsync.sync.packs.layout import NotesDoNotFit, PackNote, plan_layout
from nlmsync.sync.packs.text import block_size
from nlmsync.sync.prepared import PreparedNote
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.run import SyncDeps

PACK_TARGET_BYTES = 250_000
"""The size a vault's first layout aims its packs at when the budget allows that many: small enough that an
edit re-uploads little and a question's packs stay focused, large enough that a vault goes up in few adds."""

Members = dict[str, tuple[str, str]]
"""Each packed note of the notebook as a run found it: path -> (its pack's source id, its hash in the pack);
read once per run (`StateStore.pack_members`), before the run changes any pack."""

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
    retired: list[str] = field(default_factory=list)
    """The old sources deleted before the new packs landed, for want of room (`PackGroups.retire_early`)."""
    replacing: bool = False
    """A stage of a group that replaces older sources (`in_stages`), though this stage may retire none."""
    elsewhere: frozenset[str] = frozenset()
    """The notes the other stages of its group hold (`in_stages`): they did not leave the old packs' notes."""

    def paths(self) -> set[str]:
        return {p for pack in self.packs for p in pack.paths} | set(self.old_singles)

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
    return Room(deps.capacity.value, deps.settings.pack_free, staying, alone_parts)

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

def plan_packs(deps: SyncDeps, notes: list[PackedNote], budget: int, members: Members, remote: RemoteView,
               within: Sequence[PackRecord] | None = None) -> list[PlannedPack]:
    """The layout of `notes` (path order) as planned packs, keeping the ranges of the packs the notebook holds
    (or of the packs `within`, when the notes are theirs alone); a planned pack with exactly the notes and texts
    of a pack the notebook still holds keeps it (`keep`): a pack missing from the listing, or holding notes it
    lost to another pack, is uploaded again. `members`: what `StateStore.pack_members` says of the notebook.

    Raises:
        NotesDoNotFit: more than `budget` packs are needed.
    """
    store, nb = deps.store, deps.notebook_id
    records = {p.source_id: p for p in store.packs(nb)}
    holding = {source_id for source_id, _ in members.values()}
    ranges = [r for r in (within if within is not None else records.values()) if r.source_id in holding]
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
        if (record is not None and record.source_id in remote and record.note_count == len(pack.notes)
                and held[record.source_id] == pack.members()):
            pack.keep = record
            pack.source_id = record.source_id
    return planned

def group_changes(deps: SyncDeps, planned: Sequence[PlannedPack], registry: RegistryView, members: Members,
                  gone: Collection[str] = (), empty: Collection[PackRecord] = ()) -> list[Group]:
    """The changed packs of `planned` (not kept) with the older sources they replace, as groups in path order,
    and a group of its own for each held pack whose notes all left the layout or are `gone` (a held note that is
    in no planned pack: deleted, excluded, or now too large for a pack), for each `empty` pack (holding no
    note of the vault), and for the sources of notes alone that a kept pack holds too (retired, nothing added)."""
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
    for record in empty:
        union.find(f"old:{record.source_id}")
    for pack in planned:  # a kept pack's note still alone too (a run killed once the pack was in): its source goes
        if pack.keep is not None:
            for path in pack.paths:
                if any(m.managed for m, _ in registry.mappings(path)):
                    union.join(f"single:{path}", f"kept:{pack.keep.source_id}")
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

def in_stages(group: Group, old_notes: Callable[[str], Collection[str]]) -> list[Group]:
    """`group` carried out one new pack at a time, each stage retiring the old sources whose notes the packs landed
    so far hold all of (`old_notes`: the notes an old pack holds): a group needs one free source at a time, never
    room for all its packs at once, and no old source goes before the packs that take its notes are in."""
    if len(group.packs) < 2 or not (group.old_packs or group.old_singles):
        return [group]
    placed = group.paths()
    stages = [Group([pack], replacing=True) for pack in group.packs]
    covered: set[str] = set()
    reach: list[set[str]] = []
    for stage in stages:
        covered |= set(stage.packs[0].paths)
        reach.append(set(covered))
    by_id = {pack.source_id: i for i, pack in enumerate(group.packs) if pack.source_id is not None}
    last = len(stages) - 1
    for record in group.old_packs:
        needed = set(old_notes(record.source_id)) & placed
        at = by_id.get(record.source_id, next((i for i, held in enumerate(reach) if needed <= held), last))
        stages[at].old_packs.append(record)
    for path in group.old_singles:
        stages[next((i for i, held in enumerate(reach) if path in held), last)].old_singles.append(path)
    every = {p for pack in group.packs for p in pack.paths}
    for stage in stages:
        stage.elsewhere = frozenset(every - set(stage.packs[0].paths))
    return stages


def _group_order(group: Group) -> str:
    firsts = [p.paths[0] for p in group.packs] + [p.first_path for p in group.old_packs] + group.old_singles
    return min(firsts)

def pack_size(pack: PlannedPack) -> int:
    if pack.text is not None:
        return len(pack.text.encode("utf-8", "surrogateescape"))
    return pack.keep.size if pack.keep is not None else 0
