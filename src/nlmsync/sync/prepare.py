"""`ensure_sources_for_paths` (spec §5, "Entry"): make exactly the given notes live sources in a notebook.

A run, in order: read and hash the notes, load their source mappings and resolve the alias chains
(`decide.load_notes`, `decide.RegistryView`), and decide each note's one branch — reuse, replace
add-first, rename by hash, or new (`decide.decide_all`, `plan.decide_branch`); screen unregistered
sources titled like the run's parts (`identity`); refuse up front what cannot fit
(`decide.check_capacity_up_front`); with `--all`, take out the sources of notes that left the vault
(`all_notes`); then carry the branches out, evicting (§6) before the uploads that need room
(`runner.Runner`), or in a dry run say what would be done (`runner.simulate`).

A note that fails is reported and leaves its previous registry rows untouched; the rest go on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from nlmsync.errors import NlmsyncError
from nlmsync.store import NoteHashes
from nlmsync.sync.all_notes import AllNotesScope, remove_vanished, vanished_paths
from nlmsync.sync.decide import (
    PlannedNote,
    RegistryView,
    check_capacity_up_front,
    decide_all,
    load_notes,
    read_for_upload,
)
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.identity import screen_title_matches
from nlmsync.sync.reconcile import RemoteView
from nlmsync.sync.report import NoteOutcome, notes_done, stop_report
from nlmsync.sync.runner import Runner, simulate


async def ensure_sources_for_paths(deps: SyncDeps, paths: Sequence[str], remote: RemoteView, *,
                                   protect: set[str] | None = None, dry_run: bool = False,
                                   found: Collection[str] = (), all_notes: AllNotesScope | None = None) -> list[NoteOutcome]:
    """Make the notes at `paths` (vault-relative, normalized) live sources, in that order.

    Returns one outcome per path (reused, replaced, renamed, added, excluded or failed), with the
    evictions each note needed just before it. `protect` are paths never evicted by this call (the
    requested paths always are). With `dry_run`, nothing is written and no mutating call is made.
    `found` are the paths that came from walking the vault rather than from the user (see `load_notes`).
    With `all_notes`, the registered notes in its scope that are neither among `paths` nor claimed by a
    rename of this run, or that are now excluded by configuration, have their sources removed first
    (`removed` outcomes, before the others): renames are matched by content hash before any removal is
    decided, so a moved note keeps its source.

    Raises:
        CapacityError: the requested notes alone exceed the capacity (before any upload), or no
            managed eviction candidate is left (after the notes before it were done and recorded).
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server
            cannot be used at all (what was done before is recorded).
        An error raised after some notes were handled carries their outcomes in its `report` (a
            `RefreshReport`, `report.notes_done`).
    """
    unique = list(dict.fromkeys(paths))
    read: list[NoteHashes] = []
    notes = load_notes(deps, unique, found, deps.store.note_hashes(unique), read)
    registry = RegistryView.read(deps.store, deps.notebook_id, None if all_notes is not None else unique)
    items = decide_all(deps, notes, remote, registry)
    reread = read_for_upload(deps, items, found, read)
    if reread is not None:
        items = decide_all(deps, reread, remote, registry)
    works = [i for i in items if isinstance(i, PlannedNote)]
    await screen_title_matches(deps.client, lambda source_id: registry.mapping_by_source_id(source_id) is not None,
                               remote, {p.title: p.text for w in works for p in w.note.parts if p.text is not None})
    check_capacity_up_front(deps, works, remote, registry)
    protected = set(protect or ()) | set(paths)
    vanished = {} if all_notes is None else vanished_paths(items, all_notes, registry)
    removed = await remove_vanished(deps, remote, vanished, dry_run=dry_run)
    if dry_run:
        return removed + simulate(deps, items, remote, protected)
    left = [*vanished, *(w.decision.rename_from for w in works if w.decision.rename_from is not None)]
    try:
        return removed + await Runner(deps, remote, protected, read, left).run(items)
    except NlmsyncError as exc:
        stop_report(exc, deps.notebook_id, removed + notes_done(exc))
        raise
