"""`sources`: what the notebook holds, source by source — the packs with the range of notes each holds, the notes
alone, the attachments, and the sources nlmsync did not upload — from one listing of the notebook and the state file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync.app.results import NotebookSource, SourcesReport
from nlmsync.app.status import file_size
from nlmsync.sync import accounted_ids, orphan_ids
from nlmsync.vault import attachment_kind

if TYPE_CHECKING:
    from nlmsync.app.orchestrator import Orchestrator

__all__ = ["list_sources"]


async def list_sources(orchestrator: Orchestrator) -> SourcesReport:
    """Each source of the run's notebook and what it holds, the state file first brought level with the notebook
    (as `status` does).

    A source with an nlmsync title that the state file does not know is an orphan unless the run found it a
    look-alike, which holds other text (as `status` tells them); any other is unmanaged.

    Raises:
        UsageError: no notebook is given and the state file knows none.
        NotebookNotFoundError: the server has no such notebook.
        NotebookLMError: the server cannot be used.
    """
    notebook_id, remote, capacity, _ = await orchestrator.listing(level=True)
    store = orchestrator.store
    packs = [p for p in store.packs(notebook_id) if p.source_id in remote]
    resolved_mappings = store.mappings_with_resolved_ids(notebook_id)  # by path, part
    root = orchestrator.vault_root
    alone = [NotebookSource(source_id=source_id, title=remote.sources[source_id], kind="note", path=mapping.path,
                            part=mapping.part, part_count=mapping.part_count)
             if attachment_kind(mapping.path) is None else
             NotebookSource(source_id=source_id, title=remote.sources[source_id], kind="attachment",
                            path=mapping.path, byte_count=file_size(root, mapping.path))
             for mapping, source_id in resolved_mappings if source_id in remote]
    attachments = sum(1 for s in alone if s.kind == "attachment")
    registered = accounted_ids(store, notebook_id, resolved_mappings)
    orphans = orphan_ids(remote, registered)
    others = sorted((title, source_id) for source_id, title in remote.sources.items()
                    if source_id not in registered and source_id not in orphans)
    listed = [NotebookSource(source_id=p.source_id, title=remote.sources[p.source_id], kind="pack",
                             first_path=p.first_path, last_path=p.last_path, note_count=p.note_count,
                             byte_count=p.size) for p in packs]
    listed += alone
    listed += [NotebookSource(source_id=i, title=remote.sources[i], kind="orphan") for i in orphans]
    listed += [NotebookSource(source_id=i, title=title, kind="unmanaged") for title, i in others]
    return SourcesReport(notebook_id=notebook_id, title=remote.title, source_count=len(remote),
                         capacity=capacity.value, sources=listed,
                         pack_count=len(packs), packed_note_count=sum(p.note_count for p in packs),
                         alone_count=len(alone) - attachments, attachment_count=attachments, orphan_count=len(orphans), unmanaged_count=len(others))
