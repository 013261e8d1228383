"""Source preparation: make exactly the right notes (and attachments) live sources in a notebook.

The package map, in the order a run uses it (`docs/internals.md` tells the longer story):

- the shared vocabulary, at the root:
  - `branches` — what happens to a note or a source (`Branch`), and the live branches;
  - `titles` — content hashes and the deterministic titles of uploads;
  - `capacity` — how many sources a notebook may hold, decided once (`decide_capacity`), and a full notebook;
  - `prepared` — a vault note as a run prepares it: read (or known by its stat), split into parts within the
    source limits, hashed, titled;
  - `registry` — the registry as a run reads it (`RegistryView`), what the state file accounts for, and the
    registered paths a `refresh --all` finds gone;
  - `remote` — the notebook as a run reads it (`RemoteView`: one `notebook_get`), and a source read back, through
    the client a run drives (`SyncClient`);
  - `run` — one run: what it works with (`SyncDeps`), its state (`SyncRun`) and what `refresh --all` answers for
    (`AllNotesScope`);
  - `report` — what a run did, note by note and pack by pack (`RefreshReport`);
  - `units` — the seam between a kind of unit and the executor: what a unit uploads and records (`Unit`);
- before anything is planned: `adopt` — the state file levelled with what the notebook holds, each unknown source
  claimed by the kind its title names and judged by `evidence` (the vault as it is, the source read back);
- the entry: `ensure` — `ensure_sources_for_paths`, one run step by step;
- one subpackage per kind of unit:
  - `notes/` (notes kept one per source): `notes/decide` — each note's branch; `notes/units` — the
    branches carried out, or simulated; `notes/adopt` — a note's upload the state file did not know, settled;
  - `packs/` (many notes per source): `packs/layout` — the pure layout; `packs/text` — a pack's text;
    `packs/plan` — which notes share a pack, and which changed packs replace what; `packs/units` — the changed
    packs built and carried out; `packs/outcomes` — what became of each pack; `packs/ensure` — a run's packs;
    `packs/documents` — which documents' text goes into packs, by capacity; `packs/adopt` — a pack the state file
    did not know, settled;
  - `attachments/` (the vault's files, one per file source): `attachments/files` — a file hashed, titled, read
    when needed; `attachments/units` — uploaded by path under a name that is its title, recorded, retitled;
    `attachments/ensure` — a run's attachments, decided before the notes are carried out and carried out after;
    `attachments/adopt` — an attachment's upload the state file did not know, settled;
- carrying a run out, `carry/`: `carry/executor` — the one executor every unit goes through; `carry/eviction` —
  the sources a run deletes: room made by evicting managed sources, and the deletions earlier runs left;
  `carry/vanished` — the sources of notes that left the vault taken out (which ones: `registry`);
- for `status` and `ask`: `local_changes` — what changed in the vault since notes were synced; `carry_over` —
  the sources a conversation carries over.

The names below are the package's public surface; callers outside `sync` import them from here. They are
imported on first use; `local_changes` at once, because the function shares its name with its module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports
from nlmsync.sync.local_changes import local_changes, synced_hashes

if TYPE_CHECKING:
    from nlmsync.sync.adopt import level_with_notebook, lookalike_notice
    from nlmsync.sync.branches import Branch
    from nlmsync.sync.capacity import Capacity, CapacitySource, KnownCapacity, decide_capacity, given_capacity
    from nlmsync.sync.carry.eviction import retry_pending_deletions
    from nlmsync.sync.carry_over import history_source_ids
    from nlmsync.sync.ensure import ensure_sources_for_paths
    from nlmsync.sync.packs.outcomes import sources_layout
    from nlmsync.sync.prepared import prepare_note
    from nlmsync.sync.registry import accounted_ids, orphan_ids
    from nlmsync.sync.remote import RemoteView, read_remote
    from nlmsync.sync.report import (
        NoteOutcome,
        PackOutcome,
        RefreshReport,
        SourcesLayout,
    )
    from nlmsync.sync.run import AllNotesScope, SyncDeps, SyncRun
    from nlmsync.sync.titles import parse_title

_EXPORTS = {
    "AllNotesScope": "nlmsync.sync.run",
    "Branch": "nlmsync.sync.branches",
    "Capacity": "nlmsync.sync.capacity",
    "CapacitySource": "nlmsync.sync.capacity",
    "KnownCapacity": "nlmsync.sync.capacity",
    "NoteOutcome": "nlmsync.sync.report",
    "PackOutcome": "nlmsync.sync.report",
    "RefreshReport": "nlmsync.sync.report",
    "RemoteView": "nlmsync.sync.remote",
    "SourcesLayout": "nlmsync.sync.report",
    "SyncDeps": "nlmsync.sync.run",
    "SyncRun": "nlmsync.sync.run",
    "accounted_ids": "nlmsync.sync.registry",
    "decide_capacity": "nlmsync.sync.capacity",
    "ensure_sources_for_paths": "nlmsync.sync.ensure",
    "given_capacity": "nlmsync.sync.capacity",
    "history_source_ids": "nlmsync.sync.carry_over",
    "level_with_notebook": "nlmsync.sync.adopt",
    "lookalike_notice": "nlmsync.sync.adopt",
    "orphan_ids": "nlmsync.sync.registry",
    "parse_title": "nlmsync.sync.titles",
    "prepare_note": "nlmsync.sync.prepared",
    "read_remote": "nlmsync.sync.remote",
    "retry_pending_deletions": "nlmsync.sync.carry.eviction",
    "sources_layout": "nlmsync.sync.packs.outcomes",
}

__all__ = [
    "AllNotesScope",
    "Branch",
    "Capacity",
    "CapacitySource",
    "KnownCapacity",
    "NoteOutcome",
    "PackOutcome",
    "RefreshReport",
    "RemoteView",
    "SourcesLayout",
    "SyncDeps",
    "SyncRun",
    "accounted_ids",
    "decide_capacity",
    "ensure_sources_for_paths",
    "given_capacity",
    "history_source_ids",
    "level_with_notebook",
    "local_changes",
    "lookalike_notice",
    "orphan_ids",
    "parse_title",
    "prepare_note",
    "read_remote",
    "retry_pending_deletions",
    "sources_layout",
    "synced_hashes",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
