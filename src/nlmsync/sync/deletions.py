"""Sources a run deletes besides evictions: the deletions earlier runs could not finish
(`retry_pending_deletions`) and copies of a live source left by an add whose answer was lost
(`queue_duplicate_sources`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync import vault as vault_files
from nlmsync.errors import InputError, NotebookLMError, NotFoundError
from nlmsync.sync.decide import RegistryView
from nlmsync.sync.deps import FATAL_ERRORS, SyncDeps
from nlmsync.sync.identity import holds_text
from nlmsync.sync.plan import prepare_note
from nlmsync.sync.reconcile import RemoteView

if TYPE_CHECKING:
    from nlmsync.store import SourceMapping


async def queue_duplicate_sources(deps: SyncDeps, remote: RemoteView) -> int:
    """Queue for deletion every unregistered remote source that is a copy of a live registered one: titled
    exactly like it and holding its text (`identity`).

    Titles are unique to a path and its content, so such a source is a duplicate left by an add whose answer
    was lost and which landed after the run had looked for it. A source with the title but other text was
    added by someone else: it is marked foreign and left alone. Returns how many were queued (nothing is
    written when there are none).
    """
    store, nb = deps.store, deps.notebook_id
    mapped = store.mapped_source_ids(nb) | {p.source_id for p in store.packs(nb)}
    if all(source_id in mapped for source_id in remote.sources):  # the usual case: every source is a row's
        return 0
    registry = RegistryView.read(store, nb)
    live = {m.title: (m, resolved) for rows in registry.by_path.values() for m, resolved in rows
            if m.status == "active"}
    duplicates: list[tuple[str, str]] = []
    for source_id, title in list(remote.sources.items()):
        row, resolved = live.get(title, (None, source_id))
        if row is None or resolved == source_id or registry.mapping_by_source_id(source_id) is not None:
            continue
        if await holds_text(deps.client, source_id, _uploaded_text(deps, row), row.content_hash):
            duplicates.append((source_id, title))
        else:
            remote.foreign[source_id] = title
    if duplicates:
        with store.step():
            for source_id, title in duplicates:
                store.queue_deletion(nb, source_id, f"duplicate of {title}")
    return len(duplicates)


def _uploaded_text(deps: SyncDeps, row: SourceMapping) -> str | None:
    """The text nlmsync uploaded for a registry row: the note's part as it is now, when it still hashes the
    same; None when the note changed since (only the hash is known then)."""
    try:
        text = vault_files.read_note_text(deps.vault_root, row.path)
    except (InputError, OSError):
        return None
    parts = prepare_note(row.path, text, deps.max_words, deps.max_bytes).parts
    part = parts[row.part] if row.part < len(parts) else None
    return part.text if part is not None and part.content_hash == row.content_hash else None


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
