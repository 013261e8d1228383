"""Single notes, decided: each note's one branch — reuse, replace, rename by hash or new upload — before any
call that changes the notebook (`decide_all`, through the pure `branches.decide_branch`), and what cannot fit refused up
front (`check_capacity_up_front`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from nlmsync.errors import CapacityError
from nlmsync.store import NoteHashes
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.capacity import CAPACITY_HINT
from nlmsync.sync.prepared import PreparedNote, load_notes
from nlmsync.sync.registry import RegistryView, decide_in_order, untouchable_count
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import retitled


@dataclass
class PlannedNote:
    """A note of the run as prepared for upload, and the branch decided for it."""

    note: PreparedNote
    decision: Decision
    titles: tuple[str, ...] = ()
    """The registry titles of the note's rows as the run found them."""

    @property
    def path(self) -> str:
        return self.note.path


def read_for_upload(deps: SyncDeps, items: Sequence[PlannedNote | NoteOutcome], found: Collection[str],
                    read: list[NoteHashes], *, dry_run: bool = False) -> list[PreparedNote | NoteOutcome] | None:
    """Read the notes that were recognised by their stat but are to be uploaded after all (their source is
    gone): the run's notes again, those read, to be decided again; None when there are none. A `dry_run` keeps
    no document's text it reads (`load_notes`)."""
    if not any(isinstance(item, PlannedNote) and not item.note.is_read and needs_upload(item) for item in items):
        return None
    notes: list[PreparedNote | NoteOutcome] = []
    for item in items:
        if not isinstance(item, PlannedNote):
            notes.append(item)
        elif not item.note.is_read and needs_upload(item):
            notes.extend(load_notes(deps, [item.note.path], found, read=read, dry_run=dry_run))
        else:
            notes.append(item.note)
    return notes


def decide_all(deps: SyncDeps, notes: Sequence[PreparedNote | NoteOutcome], remote: RemoteView,
               registry: RegistryView) -> list[PlannedNote | NoteOutcome]:
    """Each note with its decision, in order (outcomes pass through); a vanished path is claimed by at most
    one rename (`registry.decide_in_order`)."""
    prepared = [n for n in notes if isinstance(n, PreparedNote)]
    decisions = iter(decide_in_order([(n.path, n.hashes) for n in prepared], remote.ids(), registry,
                                     deps.vault_root))
    return [note if isinstance(note, NoteOutcome) else
            PlannedNote(note, next(decisions), tuple(r.title for r, _ in registry.mappings(note.path)))
            for note in notes]


def needs_upload(work: PlannedNote) -> bool:
    return work.decision.uploads


def slots_needed(work: PlannedNote, remote: RemoteView) -> int:
    """Parts that will really be uploaded: a part whose exact title is already listed is adopted."""
    return sum(1 for p in work.note.parts if remote.find_title(p.title) is None)


def needs_retitle(work: PlannedNote) -> bool:
    """Whether a kept note's registry titles name another path or part than its parts' (renamed, or an earlier
    retitle failed); the hash a title carries stays what it is."""
    parts = work.note.parts
    return len(work.titles) != len(parts) or any(
        title != retitled(title, p.path, p.index, p.part_count) for title, p in zip(work.titles, parts, strict=True))


def reused_as_is(work: PlannedNote) -> bool:
    """Whether a decided note has nothing to write but its use: reused, with no alias to canonicalize and no
    retitle (`needs_retitle`)."""
    return work.decision.branch == Branch.REUSED and not work.decision.canonicalize and not needs_retitle(work)


def check_capacity_up_front(deps: SyncDeps, works: list[PlannedNote], remote: RemoteView, registry: RegistryView) -> None:
    """Refuse before any upload when the requested notes alone cannot fit in the notebook.

    Raises:
        CapacityError: the parts of the requested notes plus the sources nlmsync may not evict
            exceed the capacity.
    """
    capacity = deps.capacity.value
    required = sum(len(w.note.parts) for w in works)
    if required + len(remote) <= capacity:  # fits even if no listed source may make room
        return
    untouchable = untouchable_count(remote, registry, {p.title for w in works for p in w.note.parts
                                                       if p.text is not None})
    if required + untouchable > capacity:
        if len(remote) > capacity:  # the setting, not the notes, is what is wrong: say so first
            raise CapacityError(f"notebook {deps.notebook_id} holds {len(remote)} sources, capacity is {capacity}: "
                                f"set 'capacity' to your plan's limit; nothing was uploaded", hint=CAPACITY_HINT)
        taken = f" ({untouchable} taken by sources nlmsync did not upload)" if untouchable else ""
        raise CapacityError(
            f"the {len(works)} requested notes need {required} sources but notebook {deps.notebook_id} "
            f"holds at most {capacity}{taken}; nothing was uploaded", hint=CAPACITY_HINT)
