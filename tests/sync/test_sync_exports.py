"""The package exports exactly the documented names, each the thing itself (not a submodule of the same name)."""

from __future__ import annotations

import types

from nlmsync import sync


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(sync.__all__) == [
        "AllNotesScope", "Branch", "Capacity", "CapacitySource", "KnownCapacity", "NoteOutcome", "PackOutcome",
        "RefreshReport", "RemoteView", "SourcesLayout", "SyncDeps", "SyncRun", "accounted_ids",
        "decide_capacity", "ensure_sources_for_paths",
        "given_capacity", "history_source_ids", "level_with_notebook",
        "local_changes", "lookalike_notice", "orphan_ids", "parse_title", "prepare_note",
        "read_remote", "retry_pending_deletions", "sources_layout", "synced_hashes",
    ]
    for name in sync.__all__:
        value = getattr(sync, name)
        assert not isinstance(value, types.ModuleType), name
        assert value.__module__.startswith("nlmsync.sync"), name
