"""Packed notebooks: the source-preparation branches for sources that hold many notes (packs).

A run over packed notes, in order (what the notebook holds was levelled with the state file first, `adopt`):

1. **Layout** (`pack_plan.plan_packs`, over `pack_layout.plan_layout`): the notes in path order, cut into packs
   at the starts of the packs the notebook holds, new boundaries content-defined, within the per-source limit
   and the budget of sources left once hand-added sources, notes that stay alone and `pack_free` are counted.
2. **Decision**, per planned pack: *reused* when the notebook holds a live pack of exactly these notes with
   exactly these texts (known by the notes' recorded hashes: an idle run reads nothing); otherwise its text is
   built and titled (first and last note, count, the hash of its words: `pack_runner.build_packs`) and *added*.
3. **Groups** (`pack_plan.group_changes`): a new pack and the older sources it replaces (packs that held its
   notes, the sources of its notes uploaded alone) are one group, joined with every other new pack that
   replaces one of them; a pack left holding no note of the vault is a group of its own, retired.
4. **Add first, then retire**, group by group (`pack_runner.PackRunner`): the new packs are uploaded; then, in
   one step, they are recorded and the old ones forgotten and queued for deletion (their ids aliased to their
   successors, so a conversation's carried-over sources still resolve); then the old sources are deleted. A run
   killed anywhere leaves the registry before or after a group; the next run finds an upload the killed run
   did not record in the notebook, adopts it by its title when its notes are those of the plan, and deletes it,
   proven nlmsync's by what it holds, when they are not.

Packs are never evicted: when an add needs room, groups wait for those under way to retire their old sources
(waves), then the sources the run is retiring go first (a note's older source before its pack lands), then
managed single-note sources by the eviction queue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from nlmsync.errors import NlmsyncError
from nlmsync.store import PackRecord
from nlmsync.sync.branches import Branch
from nlmsync.sync.packs.layout import NotesDoNotFit
from nlmsync.sync.packs.outcomes import PackRun, live_note_outcomes, pack_outcome, simulated
from nlmsync.sync.packs.plan import (
    Group,
    Members,
    PackedNote,
    PlannedPack,
    Room,
    does_not_fit,
    group_changes,
    plan_packs,
    room_for_packs,
)
from nlmsync.sync.packs.units import PackRunner, build_packs
from nlmsync.sync.report import stop_report
from nlmsync.sync.run import SyncRun


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


async def ensure_packs(run: SyncRun, scope: PackScope) -> PackRun:
    """Make the packed notes of `scope` live in their packs: plan the layout, decide each pack, carry out the groups
    `scope.wanted` accepts, or in a dry run say what would be done.

    Reports every pack whose group is carried out, and the kept packs `scope.shown` accepts; per note of
    `scope.report_notes` the pack it is live in (or why not).

    Raises:
        CapacityError: the layout needs more packs than there is room for (nothing was uploaded), or no room
            could be made for an add.
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server cannot be
            used (what was done before is recorded and carried in the error's report).
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
        raise does_not_fit(deps, room, exc, notes) from None
    groups = [g for g in group_changes(deps, planned, registry, members, scope.gone, scope.empty)
              if scope.wanted is None or scope.wanted(g)]
    changed = [p for g in groups for p in g.packs]
    errors = build_packs(deps, changed, remote, scope.found, read)
    broken = {id(changed[i]): message for i, message in errors.items()}
    done = PackRun()
    failed = [g for g in groups if any(id(p) in broken for p in g.packs)]
    for group in failed:
        message = next(broken[id(p)] for p in group.packs if id(p) in broken)
        done.packs.extend(pack_outcome(p, Branch.FAILED, error=f"could not be built: {message}") for p in group.packs)
    groups = [g for g in groups if g not in failed]
    # a pack that holds one of the new packs already (`build_packs`) is that pack's, and no other group retires it
    held = {p.source_id: g for g in groups for p in g.packs if p.source_id is not None}
    for group in groups:
        group.old_packs = [r for r in group.old_packs if held.get(r.source_id, group) is group]
    groups = [g for g in groups if g.packs or g.old_packs or g.old_singles]
    done.packs.extend(pack_outcome(p, Branch.REUSED) for p in planned if p.keep is not None and scope.shown(p))
    if run.dry_run:
        done.packs.extend(simulated(deps, groups, members))
    else:
        deps.phase("uploading packs", sum(len(g.packs) for g in groups))
        runner = PackRunner(deps, remote, registry, read, run.protect, members)
        try:
            await runner.run(groups)
        except NlmsyncError as exc:
            stop_report(exc, deps.notebook_id, runner.evicted, [*done.packs, *runner.outcomes])
            raise
        done.packs.extend(runner.outcomes)
        done.notes.extend(runner.evicted)
    done.packs.sort(key=lambda o: o.paths[0] if o.paths else o.title)
    done.notes.extend(live_note_outcomes(planned, done.packs, set(scope.report_notes)))
    return done
