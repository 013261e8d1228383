"""The deletes a run decides on its own: room made by evicting managed sources only (`make_room`), and the
deletions earlier runs left retried (`retry_pending_deletions`). Each delete is made sure of by
`remote.strict_delete`; a run that needs no room and finds nothing left to delete never enters this module."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from nlmsync.errors import NotebookLMError, NotFoundError
from nlmsync.sync.branches import Branch
from nlmsync.sync.capacity import capacity_error
from nlmsync.sync.remote import RemoteView, strict_delete
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import FATAL_ERRORS, SyncDeps

if TYPE_CHECKING:
    from nlmsync.store import PendingDeletion


async def evict_path(deps: SyncDeps, remote: RemoteView, path: str, *, reason: str, branch: Branch = Branch.EVICTED,
                     queue_refused: bool = False) -> NoteOutcome:
    """Remove every source of `path` from the notebook, then its registry rows, logging each source.

    With `queue_refused`, a source whose delete the server refuses is queued for later runs (as a replaced
    note's old source is) and the outcome's `error` says so; otherwise the refusal is raised.

    Raises:
        NotebookLMError: a strict delete failed (without `queue_refused`), or the server cannot be used.
    """
    client, store, notebook_id = deps.client, deps.store, deps.notebook_id
    rows = store.mappings_by_path(notebook_id, path)
    resolved = [store.resolve_source_id(r.source_id) for r in rows]
    live = [sid for sid in resolved if sid in remote]
    refused: dict[str, str] = {}
    for source_id in live:
        try:
            await strict_delete(client, notebook_id, remote, source_id)
        except FATAL_ERRORS:
            raise
        except NotebookLMError as exc:
            if not queue_refused:
                raise
            refused[source_id] = str(exc)
    with store.step():
        for source_id in resolved:
            store.record_eviction(notebook_id, path, source_id, reason)
        store.remove_mappings(notebook_id, path)
        for source_id, why in refused.items():
            store.queue_deletion(notebook_id, source_id, f"{path}: {reason}; {why}")
    error = None
    if refused:
        error = (f"{'; '.join(dict.fromkeys(refused.values()))}: queued, a later run deletes "
                 f"{'it' if len(refused) == 1 else 'them'}")
    return NoteOutcome(path=path, branch=branch, source_ids=live, part_count=max(1, len(rows)), reason=reason,
                       error=error)


def plan_evictions(deps: SyncDeps, remote: RemoteView, occupied: int, needed: int,
                   exclude: set[str]) -> tuple[list[NoteOutcome], int]:
    """The evictions a dry run would make to fit `needed` more sources; returns them and the new occupancy.

    Raises:
        CapacityError: no managed candidate is left.
    """
    store, notebook_id, capacity = deps.store, deps.notebook_id, deps.capacity.value
    planned: list[NoteOutcome] = []
    while occupied + needed > capacity:
        path = store.next_eviction_candidate(notebook_id, exclude=frozenset(exclude))
        if path is None:
            raise capacity_error(notebook_id, capacity)
        exclude.add(path)
        live = [sid for sid in (store.resolve_source_id(r.source_id) for r in store.mappings_by_path(notebook_id, path))
                if sid in remote]
        occupied -= len(live)
        planned.append(NoteOutcome(path=path, branch=Branch.EVICTED, source_ids=live, reason="capacity"))
    return planned, occupied


async def make_room(deps: SyncDeps, remote: RemoteView, needed: int, exclude: set[str], occupied: Callable[[], int],
                    evicted: list[NoteOutcome]) -> None:
    """Evict managed candidates until `needed` more sources fit; each eviction is appended to `evicted`.

    A path is added to `exclude` before its eviction is tried, so a failing one is never picked twice.

    Raises:
        CapacityError: no managed candidate is left.
        NotebookLMError: a strict delete failed.
    """
    store, notebook_id, capacity = deps.store, deps.notebook_id, deps.capacity.value
    while occupied() + needed > capacity:
        path = store.next_eviction_candidate(notebook_id, exclude=frozenset(exclude))
        if path is None:
            raise capacity_error(notebook_id, capacity)
        exclude.add(path)
        evicted.append(await evict_path(deps, remote, path, reason="capacity"))


async def retry_pending_deletions(deps: SyncDeps, remote: RemoteView,
                                  queued: Sequence[PendingDeletion]) -> tuple[int, int]:
    """Retry the deletions earlier runs could not finish (`queued`, as `StateStore.pending_deletions` reads
    them); returns (done, still pending).

    A queued source that is no longer listed is simply marked done, without a call.
    """
    store, nb = deps.store, deps.notebook_id
    done = left = 0
    for pending in queued:
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
