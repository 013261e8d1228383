"""`refresh --all [PATH…]`: taking out the sources of the registered notes that left the vault or became excluded
(`remove_vanished`; which ones is decided by `registry.vanished_paths`, after renames are matched by content
hash). A run where nothing vanished never enters this module."""

from __future__ import annotations

from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.eviction import evict_path
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, RefreshReport
from nlmsync.sync.run import SyncDeps


async def remove_vanished(deps: SyncDeps, remote: RemoteView, vanished: dict[str, str], report: RefreshReport, *,
                          dry_run: bool) -> None:
    """Take out the sources of `vanished` paths (path -> reason), each with its registry rows in one step, into
    `report`; a source whose delete the server refuses is queued for later runs, and the run goes on.

    Raises:
        NotebookLMError: the server cannot be used (what was removed before is in `report`).
    """
    store, nb = deps.store, deps.notebook_id
    for path, reason in vanished.items():
        if dry_run:
            ids = [store.resolve_source_id(m.source_id) for m in store.mappings_by_path(nb, path)]
            report.notes.append(NoteOutcome(path=path, branch=Branch.REMOVED, reason=reason,
                                            source_ids=[i for i in ids if i in remote]))
            continue
        outcome = await evict_path(deps, remote, path, reason=reason, branch=Branch.REMOVED, queue_refused=True)
        report.notes.append(outcome)
        deps.progress(outcome)
