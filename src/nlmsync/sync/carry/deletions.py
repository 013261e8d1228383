"""Sources a run deletes besides evictions: the deletions queued by earlier steps and runs (a replaced source, a
copy left by an add whose answer was lost, a pack whose notes moved), retried until done
(`retry_pending_deletions`)."""

from __future__ import annotations

from nlmsync.errors import NotebookLMError, NotFoundError
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.remote import RemoteView


async def retry_pending_deletions(deps: SyncDeps, remote: RemoteView) -> tuple[int, int]:
    """Retry the deletions earlier runs could not finish; returns (done, still pending).

    A queued source that is no longer listed is simply marked done, without a call.
    """
    store, nb = deps.store, deps.notebook_id
    done = left = 0
    for pending in store.pending_deletions(nb):
        source_id = pending.source_id
        if source_id in remote:
            try:
                await deps.client.source_delete(source_id)
            except NotFoundError:
                pass
            except FATAL_ERRORS:
                raise
            except NotebookLMError:
                left += 1
                continue
            remote.deleted(source_id)
        with store.step():
            store.deletion_done(nb, source_id)
        done += 1
    return done, left
