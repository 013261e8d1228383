"""Packed notebooks, reported: what became of each pack (`pack_outcome`, reused, removed), why it was uploaded
(`why_uploaded`), which pack each note of a run is live in (`live_note_outcomes`), what a dry run would do (`simulated`)
and how the notebook's sources hold the notes (`sources_layout`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from nlmsync.store import PackRecord
from nlmsync.sync.branches import Branch
from nlmsync.sync.packs.plan import Group, Members, PlannedPack, pack_size
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, PackOutcome, SourcesLayout
from nlmsync.sync.run import SyncDeps

if TYPE_CHECKING:
    from nlmsync.store import StateStore
    from nlmsync.sync.registry import RegistryView


_SHOWN_IN_REASON = 3

def sources_layout(store: StateStore, notebook_id: str, remote: RemoteView,
                   registry: RegistryView | None = None) -> SourcesLayout:
    """How the notebook's live sources hold notes: notes alone, packs, and the notes the packs hold. `registry`: the
    whole registry as a run read it, when the run changed none of it since (else it is read here)."""
    rows = registry.rows() if registry is not None and registry.complete else \
        store.mappings_with_resolved_ids(notebook_id)
    alone = {m.path for m, resolved in rows if resolved in remote}
    live = [p for p in store.packs(notebook_id) if p.source_id in remote]
    return SourcesLayout(alone_note_count=len(alone), pack_count=len(live),
                         packed_note_count=sum(p.note_count for p in live))

def why_uploaded(pack: PlannedPack, group: Group, old_members: dict[str, str], left: Sequence[str] = ()) -> str:
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
    return PackOutcome(branch=branch, title=title, source_id=pack.source_id, paths=pack.paths, byte_count=pack_size(pack),
                       adopted=pack.adopted, previous_source_ids=list(previous_source_ids), reason=reason,
                       error=error)

def held_pack_outcome(record: PackRecord, paths: list[str]) -> PackOutcome:
    """A pack a run left as it is (no change in its range), reported reused with its notes in order."""
    return PackOutcome(branch=Branch.REUSED, title=record.title, source_id=record.source_id, paths=paths,
                       byte_count=record.size)

def removed_outcome(record: PackRecord) -> PackOutcome:
    return PackOutcome(branch=Branch.REMOVED, title=record.title, source_id=record.source_id, byte_count=record.size,
                       reason="its notes left the notebook's packs")

def live_note_outcomes(planned: Sequence[PlannedPack], outcomes: Sequence[PackOutcome],
                       paths: Collection[str], members: Members) -> list[NoteOutcome]:
    """Per note of `paths` held by a planned pack: the pack it is live in, or the pack's failure. A note whose text
    is what its pack held before (`members`) is reused, whatever became of the pack; a changed or new note takes its
    pack's branch."""
    by_pack = {id(p): p for p in planned}
    result_of = {tuple(o.paths): o for o in outcomes}
    notes: list[NoteOutcome] = []
    for pack in by_pack.values():
        outcome = result_of.get(tuple(pack.paths))
        for note in pack.notes:
            path = note.path
            if path not in paths:
                continue
            if outcome is not None and outcome.branch == Branch.FAILED:
                notes.append(NoteOutcome(path=path, branch=Branch.FAILED, error=outcome.error))
            elif pack.source_id is not None:
                held = members.get(path)
                same = held is not None and held[1] == note.note_hash
                branch = outcome.branch if outcome is not None and not same else Branch.REUSED
                notes.append(NoteOutcome(path=path, branch=branch, source_ids=[pack.source_id],
                                         pack=pack.title or (pack.keep.title if pack.keep else None)))
    return notes

def left_notes(store: StateStore, notebook_id: str, group: Group) -> list[str]:
    """The notes of a group's old packs that none of its new packs holds (deleted, excluded, alone now)."""
    kept = {p for pack in group.packs for p in pack.paths} | group.elsewhere
    return sorted(p for r in group.old_packs for p, _ in store.notes_of_pack(notebook_id, r.source_id)
                  if p not in kept)

def simulated(deps: SyncDeps, groups: Sequence[Group], members: Members) -> list[PackOutcome]:
    """What carrying out `groups` would do (a dry run)."""
    store, nb = deps.store, deps.notebook_id
    old_members = {path: note_hash for path, (_, note_hash) in members.items()}
    outcomes: list[PackOutcome] = []
    for group in groups:
        branch = Branch.REPLACED if group.old_packs or group.old_singles else Branch.ADDED
        previous = [r.source_id for r in group.old_packs]
        left = left_notes(store, nb, group)
        for i, pack in enumerate(group.packs):
            outcomes.append(pack_outcome(pack, branch, previous_source_ids=previous if i == 0 else [],
                                         reason=why_uploaded(pack, group, old_members, left if i == 0 else ())))
        if not group.packs:
            outcomes.extend(removed_outcome(r) for r in group.old_packs)
    return outcomes
