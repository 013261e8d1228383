"""A run's packs: which of its notes go into packs and which packs it lays out (`pack_notes`), then the branches per
pack carried out group by group (`ensure_packs`). Packs are never evicted."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from nlmsync import vault as vault_files
from nlmsync.errors import CapacityError
from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.executor import Executor
from nlmsync.sync.packs.layout import NotesDoNotFit
from nlmsync.sync.packs.outcomes import held_pack_outcome, live_note_outcomes, pack_outcome, simulated
from nlmsync.sync.packs.plan import (
    Group,
    Members,
    PackedNote,
    PlannedPack,
    Room,
    does_not_fit,
    group_changes,
    in_stages,
    packable,
    packed_notes,
    packs_in_reach,
    plan_packs,
    room_for_packs,
)
from nlmsync.sync.packs.units import PackGroups, PackUnit, build_packs
from nlmsync.sync.prepared import PreparedNote, load_notes, split_limits
from nlmsync.sync.registry import STALE_HASH, RegistryView, vanished_paths
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, PackOutcome
from nlmsync.sync.run import Request, SyncDeps, SyncRun


def crowded(deps: SyncDeps, remote: RemoteView) -> bool:
    """Whether the notebook holds more than its capacity leaves for packs (`pack_free` kept free): the capacity
    was lowered, and the run lays out every pack again, to merge them until they fit."""
    return len(remote) + deps.settings.pack_free > deps.capacity.value


@dataclass
class PackedNotes:
    """The notebook's packed notes as a run finds them, before it changes any pack: each note's pack and hash in
    it (`members`), and the notes a `refresh --all` passes over (`settled`)."""

    any: bool = False
    """Whether the notebook holds packs."""
    members: Members = field(default_factory=dict)
    settled: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, run: SyncRun, request: Request) -> PackedNotes:
        deps, store, nb = run.deps, run.deps.store, run.deps.notebook_id
        if not store.has_packs(nb):
            return cls()
        if request.stats is None or not request.whole_vault or deps.settings.pack == "never" \
                or crowded(deps, run.remote):
            return cls(True, store.pack_members(nb))
        members, recorded = store.pack_members_with_stats(nb, split_limits(deps))
        return cls(True, members, settled_in_packs(deps, request.paths, request.stats, members, recorded,
                                                     run.remote))


def settled_in_packs(deps: SyncDeps, paths: Sequence[str], stats: Mapping[str, tuple[int, int]],
                     members: Members, recorded: Mapping[str, tuple[int, int]], remote: RemoteView) -> set[str]:
    """The notes of `paths` a run need not look at: each in a live pack (`members`) with its file's modification
    time and size (`stats`) those `recorded` with the text its pack holds, and not excluded by the `exclude`
    patterns. What an idle `refresh --all` of a packed notebook costs: a `stat` and a lookup a note, no read and
    no object per note."""
    whole = _whole_packs(deps, members, remote)
    settled = {p for p in paths if (st := stats.get(p)) is not None and recorded.get(p) == st
               and members[p][0] in whole}
    patterns = deps.settings.exclude
    if patterns and settled:
        settled = {p for p in settled if not vault_files.excluded_by_pattern(deps.vault_root, p, patterns)}
    return settled


def _whole_packs(deps: SyncDeps, members: Members, remote: RemoteView) -> set[str]:
    """The live packs that hold exactly the notes recorded as theirs: not one that gave notes to another pack, or
    that was taken from the notebook at an older version of its notes (its notes are laid out again)."""
    held: dict[str, int] = {}
    for source_id, _ in members.values():
        held[source_id] = held.get(source_id, 0) + 1
    return {r.source_id for r in deps.store.packs(deps.notebook_id)
            if r.source_id in remote and held.get(r.source_id) == r.note_count and r.content_hash != STALE_HASH}


async def pack_notes(run: SyncRun, request: Request, packed: PackedNotes, items: list[PreparedNote | NoteOutcome],
                     known: Mapping[str, NoteHashes]) -> list[PreparedNote | NoteOutcome]:
    """The run's notes that fit a pack made live in their packs (`known`: the hash records of `items`); returns the
    notes that stay alone and the outcomes of the rest, for the single notes' branches.

    A run over a few notes (`ask`, `refresh PATH…`), or a `refresh --all` whose other notes are settled in their
    packs, lays out only the packs in reach of the notes it has to look at; the other packs stay as they are
    (and `refresh --all` reports them reused)."""
    deps, members, settled = run.deps, packed.members, packed.settled
    store, nb = deps.store, deps.notebook_id
    unpacking = request.all_notes is not None and deps.settings.pack == "never"
    fitting: list[PreparedNote] = []
    alone: list[PreparedNote | NoteOutcome] = []
    for item in items:
        if isinstance(item, PreparedNote) and not unpacking and packable(deps, item, _size(item, known)):
            fitting.append(item)
        else:
            alone.append(item)
    holding = {source_id for source_id, _ in members.values()}
    every_pack = store.packs(nb)
    records = [r for r in every_pack if r.source_id in holding]
    wanted, shown = _scope(run, request)
    in_run = {i.path for i in items}
    changed = list(fitting)

    async def lay_out(narrowed: bool) -> set[str] | None:
        """Lay out the packs in reach of the notes that changed (`narrowed`), or every pack; returns the packs
        reached (None: every one)."""
        fitting = list(changed)
        in_reach: list[PackRecord] | None = None
        reached: set[str] | None = None
        if narrowed:
            fitting_paths = {f.path for f in fitting}
            # with `refresh --all`, also the packs of notes that are neither settled nor packable now: gone,
            # excluded, or too large for a pack
            leaving_packs = [p for p in members if p not in settled and p not in fitting_paths] if settled else []
            in_reach = packs_in_reach(records, [*fitting_paths, *leaving_packs])
            reached = {r.source_id for r in in_reach}
        held = {path for path, (source_id, _) in members.items() if reached is None or source_id in reached}
        # a whole-vault run that looks at every note has every note of the vault among `items` already
        neighbours = [] if request.whole_vault and not narrowed and not settled \
            else sorted(held - in_run - run.files_alone)
        neighbours_known = store.note_hashes(neighbours)
        for item in load_notes(deps, neighbours, neighbours, neighbours_known, run.read, request.stats,
                               dry_run=run.dry_run):
            if isinstance(item, PreparedNote) and not unpacking and packable(deps, item,
                                                                             _size(item, neighbours_known)):
                fitting.append(item)
        layout = packed_notes(deps, fitting, {**neighbours_known, **known})
        scope = PackScope(
            layout, members, shown, wanted, in_reach, gone=held - {n.path for n in layout},
            # a whole-vault run retires the packs that hold no note of the vault (an older upload adopted)
            empty=[r for r in every_pack if r.source_id not in holding] if request.whole_vault else [],
            # the layout leaves room for the sources still to add: notes kept alone, attachments kept as files
            alone_parts=sum(len(i.parts) for i in alone
                            if isinstance(i, PreparedNote) and not _live(i.path, run.registry, run.remote))
            + run.file_room,
            leaving=set(vanished_paths(request.all_notes, run.registry, items, [*settled, *run.files_alone]))
            if request.all_notes is not None else set(),
            found={*request.found, *neighbours},
            # per note, only those the user named (a run over every note, or every synced one, says its packs)
            report_notes=() if request.all_notes is not None else [p for p in request.paths
                                                                    if p not in request.found])
        if in_reach is None or in_reach or layout or scope.empty:  # else nothing in reach to lay out
            await ensure_packs(run, scope)
        return reached

    narrowed = (bool(settled) or request.all_notes is None) and not crowded(deps, run.remote)
    try:
        reached = await lay_out(narrowed)
    except NoRoomInReach:
        if request.all_notes is None:
            raise
        # the packs in reach cannot take the change in the room the others leave: every pack is laid out, so
        # that the others (taken by their titles or not) are merged to make room too
        reached = await lay_out(False)
    if settled and reached is not None:  # the packs out of reach of every change: reused as they are
        notes_of: dict[str, list[str]] = {}
        for path, (source_id, _) in members.items():
            if source_id not in reached:
                notes_of.setdefault(source_id, []).append(path)
        run.report.packs.extend(held_pack_outcome(r, sorted(notes_of.get(r.source_id, ()))) for r in records
                                if r.source_id not in reached and r.source_id in run.remote)
        run.report.packs.sort(key=_pack_order)
    return alone


def _scope(run: SyncRun, request: Request) -> tuple[Callable[[Group], bool] | None, Callable[[PlannedPack], bool]]:
    """Which groups a run carries out and which kept packs it reports: every one for `refresh --all`, those
    touching its folders for `refresh --all PATH`, those holding a requested note otherwise."""
    all_notes, requested = request.all_notes, set(request.paths)
    if request.whole_vault:
        return None, lambda pack: True
    if all_notes is not None:
        scope = all_notes
        store, nb = run.deps.store, run.deps.notebook_id

        def covers_group(group: Group) -> bool:
            paths = group.paths() | {p for r in group.old_packs for p, _ in store.notes_of_pack(nb, r.source_id)}
            return any(scope.covers(p) for p in paths)

        return covers_group, lambda pack: any(scope.covers(p) for p in pack.paths)

    def holds_requested(group: Group) -> bool:
        return any(p in requested for pack in group.packs for p in pack.paths)

    def shows(pack: PlannedPack) -> bool:
        return any(p in requested for p in pack.paths)

    return holds_requested, shows


def _live(path: str, registry: RegistryView, remote: RemoteView) -> bool:
    rows = registry.mappings(path)
    return bool(rows) and all(resolved in remote for _, resolved in rows)


def _size(note: PreparedNote, known: Mapping[str, NoteHashes]) -> int:
    text = note.parts[0].text
    return len(text.encode("utf-8", "surrogateescape")) if text is not None else known[note.path].size


def _pack_order(outcome: PackOutcome) -> str:
    return outcome.paths[0] if outcome.paths else outcome.title


class NoRoomInReach(CapacityError):
    """The packs in reach of a run's notes cannot hold them in the room the other packs leave (nothing was
    uploaded)."""


@dataclass
class PackScope:
    """What a packed run lays out and reports: its packable `notes` (path order) and what it knows of the packs
    the notebook holds (`members`: `StateStore.pack_members`, read before the run changes any pack)."""

    notes: list[PackedNote]
    members: Members
    shown: Callable[[PlannedPack], bool]
    """The kept packs it reports."""
    wanted: Callable[[Group], bool] | None = None
    """The groups it carries out (all with None)."""
    within: Sequence[PackRecord] | None = None
    """The packs whose ranges `notes` are (a run over a few notes: `ask`, `refresh PATH`), laid out in the room the
    other packs leave; None: every pack's."""
    gone: Collection[str] = ()
    """Packed notes in no planned pack (deleted, excluded, now too large): their packs are retired or replaced."""
    empty: Collection[PackRecord] = ()
    """Packs holding no note of the vault: retired."""
    alone_parts: int = 0
    """Sources still to add for the notes that stay alone: the layout leaves them room."""
    leaving: Collection[str] = ()
    """Notes whose single-note sources go (into packs, or out of the notebook): their room is the layout's."""
    found: Collection[str] = ()
    """Paths a walk of the vault found (an unreadable one is passed over, not failed)."""
    report_notes: Collection[str] = ()
    """Notes to say, each, which pack they are live in."""


async def ensure_packs(run: SyncRun, scope: PackScope) -> None:
    """Make the packed notes of `scope` live in their packs: plan the layout, decide each pack, carry out the groups
    `scope.wanted` accepts, or in a dry run say what would be done.

    Reports, in the run's report, every pack whose group is carried out, and the kept packs `scope.shown` accepts;
    per note of `scope.report_notes` the pack it is live in (or why not).

    Raises:
        CapacityError: the layout needs more packs than there is room for (nothing was uploaded), or no room
            could be made for an add.
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server cannot be
            used (what was done before is recorded and in the run's report).
    """
    deps, remote, registry, read = run.deps, run.remote, run.registry, run.read
    notes, members, within = scope.notes, scope.members, scope.within
    room = room_for_packs(deps, remote, registry, [*(n.path for n in notes), *scope.leaving], scope.alone_parts)
    if within is not None:
        inside = {r.source_id for r in within}
        elsewhere = sum(1 for p in deps.store.packs(deps.notebook_id) if p.source_id in remote and p.source_id not in inside)
        room = Room(room.capacity, room.free, room.staying + elsewhere, room.alone_parts)
    try:
        planned = plan_packs(deps, notes, room.budget, members, remote, within)
    except NotesDoNotFit as exc:
        error = does_not_fit(deps, room, exc, notes)
        raise (NoRoomInReach(error.message, hint=error.hint) if within is not None else error) from None
    groups = [g for g in group_changes(deps, planned, registry, members, scope.gone, scope.empty)
              if scope.wanted is None or scope.wanted(g)]
    changed = [p for g in groups for p in g.packs]
    errors = build_packs(deps, changed, remote, scope.found, read)
    broken = {id(changed[i]): message for i, message in errors.items()}
    report = run.report
    failed = [g for g in groups if any(id(p) in broken for p in g.packs)]
    for group in failed:
        message = next(broken[id(p)] for p in group.packs if id(p) in broken)
        report.packs.extend(pack_outcome(p, Branch.FAILED, error=f"could not be built: {message}") for p in group.packs)
    groups = [g for g in groups if g not in failed]
    # a pack that holds one of the new packs already (`build_packs`) is that pack's, and no other group retires it
    held = {p.source_id: g for g in groups for p in g.packs if p.source_id is not None}
    for group in groups:
        group.old_packs = [r for r in group.old_packs if held.get(r.source_id, group) is group]
    groups = [g for g in groups if g.packs or g.old_packs or g.old_singles]
    report.packs.extend(pack_outcome(p, Branch.REUSED) for p in planned if p.keep is not None and scope.shown(p))
    if run.dry_run:
        report.packs.extend(simulated(deps, groups, members))
    else:
        deps.phase("uploading packs", sum(len(g.packs) for g in groups))
        shared = PackGroups(deps, remote, registry, read, members, report)
        executor = Executor(deps, remote, run.protect, retire_early=PackUnit.retire_one)
        store, nb = deps.store, deps.notebook_id

        def old_notes(source_id: str) -> list[str]:
            return [path for path, _ in store.notes_of_pack(nb, source_id)]

        # the groups that free sources go first, the smallest first: with no free source, an old pack goes before
        # its successor is in only until the first of them freed one, and then every other group adds first
        freeing = sorted(groups, key=lambda g: (len(g.packs) >= len(g.old_packs) + len(g.old_singles), len(g.packs)))
        staged = [stage for group in freeing for stage in in_stages(group, old_notes)]
        stop = await executor.execute([PackUnit(shared, stage) for stage in staged])
        if stop is not None:
            raise stop
    report.packs.sort(key=_pack_order)
    report.notes.extend(live_note_outcomes(planned, report.packs, set(scope.report_notes), members))
