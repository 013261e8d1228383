"""The package exports exactly the documented names."""

from __future__ import annotations

from nlmsync import store


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(store.__all__) == [
        "CompactionReport", "ConversationSummary", "EvictionRecord", "LearnedCapacity", "LruEntry", "Message",
        "NoteHashes", "PackRecord", "PendingDeletion", "QueryRecord", "ReconcileResult", "ResolvedRow",
        "SourceMapping", "StateStore", "check_state_file", "open_database",
    ]
    for name in store.__all__:
        assert getattr(store, name).__module__.startswith("nlmsync.store")
