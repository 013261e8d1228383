"""Source preparation: make exactly the right notes live sources in a notebook.

- `titles` — deterministic source titles and content hashes;
- `split` — splitting notes over the source limits into numbered parts;
- `plan` — the pure branch decision (reuse, replace, rename, new) for one note;
- `reconcile` — reading the remote listing once and reconciling the registry against it;
- `adopt` — the state file levelled with the notebook: what the notebook holds that the state file does not
  know (another machine's uploads, an interrupted run's) adopted, proven nlmsync's by what it holds;
- `eviction` — the capacity loop: room made against the remote count, managed sources only;
- `prepare` — `ensure_sources_for_paths`, the service's entry: one run, step by step;
- `deps` — `SyncDeps`, what a run works with (server, registry, vault, settings);
- `decide` — reading and hashing a run's notes, their mappings read once, the capacity check, each branch;
- `runner` — carrying the branches out (evictions, concurrent uploads, registry writes), or a dry run;
- `all_notes` — `refresh --all`: the notes that left the vault and the removal of their sources;
- `deletions` — retrying unfinished deletions, queueing duplicates of a lost add;
- `carry_over` — `history_source_ids`, the sources a conversation carries over;
- `citations` — finding cited text in a note (or in which note of a pack) and the heading above it;
- `pack_layout`, `pack_text`, `packs` — packing many notes into one source: which notes share a pack, a pack's
  text, and the branches for packs;
- `local_changes` — the notes a vault's edits touch (`local_changes`);
- `report` — the per-note outcomes a refresh reports.

The names below are the package's public surface; callers outside `sync` import them from here. They are
imported on first use; `local_changes` at once, because the function shares its name with its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports
from nlmsync.sync.local_changes import local_changes, synced_hashes

if TYPE_CHECKING:
    from nlmsync.sync.adopt import level_with_notebook, lookalike_notice
    from nlmsync.sync.all_notes import AllNotesScope
    from nlmsync.sync.carry_over import history_source_ids
    from nlmsync.sync.citations import find_cited_note, find_cited_text, heading_above
    from nlmsync.sync.deletions import retry_pending_deletions
    from nlmsync.sync.deps import SyncDeps, given_capacity
    from nlmsync.sync.pack_outcomes import sources_layout
    from nlmsync.sync.plan import Branch, prepare_note
    from nlmsync.sync.prepare import PreparedSources, ensure_sources_for_paths
    from nlmsync.sync.reconcile import RemoteView, accounted_ids, orphan_ids, read_remote
    from nlmsync.sync.report import (
        NoteOutcome,
        PackOutcome,
        RefreshReport,
        SourcesLayout,
        notes_done,
        packs_done,
    )
    from nlmsync.sync.titles import parse_title

_EXPORTS = {
    "Branch": "nlmsync.sync.plan",
    "AllNotesScope": "nlmsync.sync.all_notes",
    "NoteOutcome": "nlmsync.sync.report",
    "PackOutcome": "nlmsync.sync.report",
    "PreparedSources": "nlmsync.sync.prepare",
    "SourcesLayout": "nlmsync.sync.report",
    "find_cited_note": "nlmsync.sync.citations",
    "packs_done": "nlmsync.sync.report",
    "sources_layout": "nlmsync.sync.pack_outcomes",
    "RefreshReport": "nlmsync.sync.report",
    "RemoteView": "nlmsync.sync.reconcile",
    "SyncDeps": "nlmsync.sync.deps",
    "given_capacity": "nlmsync.sync.deps",
    "ensure_sources_for_paths": "nlmsync.sync.prepare",
    "find_cited_text": "nlmsync.sync.citations",
    "heading_above": "nlmsync.sync.citations",
    "history_source_ids": "nlmsync.sync.carry_over",
    "level_with_notebook": "nlmsync.sync.adopt",
    "lookalike_notice": "nlmsync.sync.adopt",
    "notes_done": "nlmsync.sync.report",
    "accounted_ids": "nlmsync.sync.reconcile",
    "orphan_ids": "nlmsync.sync.reconcile",
    "parse_title": "nlmsync.sync.titles",
    "prepare_note": "nlmsync.sync.plan",
    "read_remote": "nlmsync.sync.reconcile",
    "retry_pending_deletions": "nlmsync.sync.deletions",
}

__all__ = [
    "AllNotesScope",
    "Branch",
    "NoteOutcome",
    "PackOutcome",
    "PreparedSources",
    "RefreshReport",
    "RemoteView",
    "SourcesLayout",
    "SyncDeps",
    "accounted_ids",
    "ensure_sources_for_paths",
    "find_cited_note",
    "find_cited_text",
    "given_capacity",
    "heading_above",
    "history_source_ids",
    "level_with_notebook",
    "local_changes",
    "lookalike_notice",
    "notes_done",
    "orphan_ids",
    "packs_done",
    "parse_title",
    "prepare_note",
    "read_remote",
    "retry_pending_deletions",
    "sources_layout",
    "synced_hashes",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
