"""Capacity and eviction: make room against the remote count, evicting managed sources only.

The loop asks the registry's segmented LRU for a managed candidate path, deletes its sources strictly
(a delete that may not have happened is checked against a fresh listing, never assumed), then drops
its registry rows and logs the eviction in one step. No candidate left means the notebook is full
of sources nlmsync may not touch (or of notes this run is making live): a `CapacityError` (exit 3).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from nlmsync.errors import (
    CapacityError,
    ConnectionProblem,
    NotebookLMError,
    NotFoundError,
    ServerCapacityError,
    ServerValidationError,
)
from nlmsync.sync.branches import Branch
from nlmsync.sync.deps import FATAL_ERRORS
from nlmsync.sync.remote import RemoteView, lookup_after_lost_answer
from nlmsync.sync.report import NoteOutcome

if TYPE_CHECKING:
    from nlmsync.store import StateStore
    from nlmsync.sync.deps import SyncClient

FULL_HINT = ("set 'capacity' to your plan's limit (50 free, 100 Plus, 300 Pro, 600 Ultra) in "
             ".nlmsync/config.toml or NLMSYNC_CAPACITY")
CAPACITY_HINT = ("raise the 'capacity' setting if your plan allows more sources "
                 "(50 free, 100 Plus, 300 Pro, 600 Ultra), or remove sources in NotebookLM")


SMALLEST_PLAN_LIMIT = 50
_INVALID_ARGUMENT = re.compile(r"invalid[ _]argument|\(code 3\)", re.IGNORECASE)


def means_full(refusal: NotebookLMError, held: int) -> bool:
    """Whether the server's refusal of an add says the notebook is full: it says so, or it refuses the add as
    an invalid argument — how NotebookLM answers an add beyond the plan's limit — while the notebook holds
    `held` sources, at least the smallest plan's limit (below it, the add itself was at fault)."""
    if isinstance(refusal, ServerCapacityError):
        return True
    return (isinstance(refusal, ServerValidationError) and held >= SMALLEST_PLAN_LIMIT
            and _INVALID_ARGUMENT.search(refusal.raw) is not None)


def full_notebook_error(notebook_id: str, held: int, setting: int) -> CapacityError:
    """The error of a run stopped by the server's refusal of an add as full, at `held` sources."""
    below = f", below the 'capacity' setting ({setting})" if held < setting else ""
    return CapacityError(
        f"notebook {notebook_id} is full: the server refused a source at {held} sources{below}; later runs keep "
        f"it to {held} and evict within that", hint=FULL_HINT)


def capacity_error(notebook_id: str, capacity: int) -> CapacityError:
    return CapacityError(
        f"notebook {notebook_id} is full (capacity {capacity} sources) and no source uploaded by "
        "nlmsync may be evicted", hint=CAPACITY_HINT)


async def strict_delete(client: SyncClient, notebook_id: str, remote: RemoteView, source_id: str) -> None:
    """Delete one source and be sure it is gone.

    When the answer is lost, a fresh listing decides: gone means done; still listed means the delete
    was not applied, so it is sent once more (deleting is safe to repeat once the listing proved it).

    Raises:
        NotebookLMError: the server refused the delete, or the second attempt failed too.
    """
    try:
        await client.source_delete(source_id)
    except NotFoundError:
        pass
    except ConnectionProblem:
        if source_id in await lookup_after_lost_answer(client, notebook_id):
            try:
                await client.source_delete(source_id)
            except NotFoundError:
                pass
    remote.deleted(source_id)


async def evict_path(client: SyncClient, store: StateStore, notebook_id: str, remote: RemoteView, path: str, *,
                     reason: str, branch: Branch = Branch.EVICTED, queue_refused: bool = False) -> NoteOutcome:
    """Remove every source of `path` from the notebook, then its registry rows, logging each source.

    With `queue_refused`, a source whose delete the server refuses is queued for later runs (as a replaced
    note's old source is) and the outcome's `error` says so; otherwise the refusal is raised.

    Raises:
        NotebookLMError: a strict delete failed (without `queue_refused`), or the server cannot be used.
    """
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


def plan_evictions(store: StateStore, notebook_id: str, remote: RemoteView, occupied: int, needed: int,
                   capacity: int, exclude: set[str]) -> tuple[list[NoteOutcome], int]:
    """The evictions a dry run would make to fit `needed` more sources; returns them and the new occupancy.

    Raises:
        CapacityError: no managed candidate is left.
    """
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


async def make_room(client: SyncClient, store: StateStore, notebook_id: str, remote: RemoteView, needed: int, capacity: int,
                    exclude: set[str], occupied: Callable[[], int], evicted: list[NoteOutcome]) -> None:
    """Evict managed candidates until `needed` more sources fit; each eviction is appended to `evicted`.

    A path is added to `exclude` before its eviction is tried, so a failing one is never picked twice.

    Raises:
        CapacityError: no managed candidate is left.
        NotebookLMError: a strict delete failed.
    """
    while occupied() + needed > capacity:
        path = store.next_eviction_candidate(notebook_id, exclude=frozenset(exclude))
        if path is None:
            raise capacity_error(notebook_id, capacity)
        exclude.add(path)
        evicted.append(await evict_path(client, store, notebook_id, remote, path, reason="capacity"))
