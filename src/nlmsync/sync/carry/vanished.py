"""`refresh --all [PATH…]`: taking out the sources of the registered notes that left the vault or became
excluded (`remove_vanished`; which they are is decided with the single notes' branches,
`notes.decide.vanished_paths`)."""

from __future__ import annotations

from nlmsync.errors import NlmsyncError
from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.eviction import evict_path
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, stop_report


async def remove_vanished(deps: SyncDeps, remote: RemoteView, vanished: dict[str, str], *,
                          dry_run: bool) -> list[NoteOutcome]:
    """Take out the sources of `vanished` paths (path -> reason), each with its registry rows in one step; a
    source whose delete the server refuses is queued for later runs, and the run goes on.

    Raises:
        NotebookLMError: the server cannot be used (what was removed before is in its `report`,
            `report.notes_done`).
    """
    store, nb = deps.store, deps.notebook_id
    outcomes: list[NoteOutcome] = []
    for path, reason in vanished.items():
        if dry_run:
            ids = [store.resolve_source_id(m.source_id) for m in store.mappings_by_path(nb, path)]
            outcomes.append(NoteOutcome(path=path, branch=Branch.REMOVED, reason=reason,
                                        source_ids=[i for i in ids if i in remote]))
            continue
        try:
            outcome = await evict_path(deps.client, store, nb, remote, path, reason=reason, branch=Branch.REMOVED,
                                       queue_refused=True)
        except NlmsyncError as exc:
            stop_report(exc, nb, outcomes)
            raise
        outcomes.append(outcome)
        deps.progress(outcome)
    return outcomes
