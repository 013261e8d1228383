"""Where one note is in the notebook, as `status PATH…` reports it: in a pack, alone (its own source, or its
parts), missing (its source is gone from the notebook) or not synced."""

from __future__ import annotations

from nlmsync.app.results import NotePlacement
from nlmsync.store import StateStore
from nlmsync.sync import RemoteView

__all__ = ["note_placement"]


def note_placement(store: StateStore, notebook_id: str, path: str, remote: RemoteView) -> NotePlacement:
    """Where the note at `path` is in the notebook `remote` lists: in a pack, alone, or not in it."""
    held = store.pack_members(notebook_id, [path]).get(path)
    if held is not None:
        pack = store.pack_by_source_id(notebook_id, held[0])
        return NotePlacement(path=path, where="pack" if held[0] in remote else "missing", source_ids=[held[0]],
                             pack=pack.title if pack else None)
    rows = store.mappings_by_path(notebook_id, path)
    if not rows:
        return NotePlacement(path=path, where="not synced")
    ids = [store.resolve_source_id(r.source_id) for r in rows]
    return NotePlacement(path=path, where="alone" if all(i in remote for i in ids) else "missing", source_ids=ids)
