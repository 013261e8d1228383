"""Compaction: conversation, message and query-record bounds; alias pruning and the hard cap."""

from __future__ import annotations

from pathlib import Path

from tests.store.helpers import NB, add, open_store

from nlmsync.store import StateStore
from nlmsync.store._compaction import alias_low_water


def _count(store: StateStore, table: str) -> int:
    return store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def test_newest_conversations_are_kept_automatically(state_path: Path) -> None:
    with open_store(state_path, max_conversations=3) as store:
        for i in range(6):
            store.record_turn(NB, f"c{i}", "q", "a", [f"s{i}"], [], {})
        store.record_turn(NB, "c1", "q again", "a", [], [], {})
        assert store.conversations(NB) == ["c1", "c5", "c4"]
        assert store.query_records(NB, "c0") == []
        assert store.messages(NB, "c2") == []
        assert _count(store, "messages") == 3  # c1 was dropped before it came back


def test_messages_and_query_records_are_bounded_per_conversation(state_path: Path) -> None:
    with open_store(state_path, max_messages_per_conversation=5, max_query_records_per_conversation=3) as store:
        for i in range(8):
            store.record_turn(NB, "c", f"q{i}", f"a{i}", [f"s{i}"], [], {})
        store.record_turn(NB, "other", "q", "a", [], [], {})
        assert [m.question for m in store.messages(NB, "c")] == ["q3", "q4", "q5", "q6", "q7"]
        assert [r.question for r in store.query_records(NB, "c")] == ["q7", "q6", "q5"]
        assert len(store.messages(NB, "other")) == 1


def test_compact_reports_what_it_dropped(state_path: Path) -> None:
    with open_store(state_path) as store:
        for i in range(4):
            store.record_turn(NB, f"c{i}", "q", "a", [], [], {})
    with open_store(state_path, max_conversations=2) as store:
        report = store.compact()
        assert (report.conversations, report.messages, report.query_records) == (2, 2, 2)
        assert store.compact().conversations == 0


def test_alias_pruning_keeps_what_mappings_and_kept_history_need(store: StateStore) -> None:
    add(store, "live.md", "v3")
    store.register_source_alias("v1", "v2")
    store.register_source_alias("v2", "v3")
    add(store, "held.md", "hist-old")
    store.register_source_alias("hist-old", "hist-new")
    store.register_source_alias("asked-old", "asked-new")
    store.record_turn(NB, "c", "q", "a", ["asked-old"], [], {})
    store.register_source_alias("orphan-old", "orphan-new")
    report = store.compact()
    assert report.aliases == 1
    assert store.aliases() == {"v1": "v3", "v2": "v3", "hist-old": "hist-new", "asked-old": "asked-new"}


def test_aliases_of_dropped_conversations_are_pruned(state_path: Path) -> None:
    with open_store(state_path, max_conversations=1) as store:
        store.register_source_alias("old-1", "new-1")
        store.record_turn(NB, "c1", "q", "a", ["old-1"], [], {})
        assert store.compact().aliases == 0
        store.record_turn(NB, "c2", "q", "a", [], [], {})
        assert store.aliases() == {}


def test_hard_alias_cap_holds_without_losing_a_resolution(state_path: Path) -> None:
    with open_store(state_path, max_aliases=10) as store:
        with store.step():
            for i in range(8):
                add(store, f"n{i}.md", f"old{i}")
                store.register_source_alias(f"old{i}", f"new{i}")
            store.record_turn(NB, "c", "q", "a", [f"asked{i}" for i in range(8)], [], {})
            for i in range(8):
                store.register_source_alias(f"asked{i}", f"answer{i}")
        assert len(store.aliases()) <= 10
        assert [store.resolve_source_id(m.source_id) for m in store.all_mappings(NB)] == [
            f"new{i}" for i in range(8)]
        ids = store.query_records(NB, "c")[0].source_ids
        assert [store.resolve_source_id(i) for i in ids] == [f"answer{i}" for i in range(8)]


def test_alias_cap_trims_below_itself_so_the_next_registrations_do_not_compact(state_path: Path) -> None:
    with open_store(state_path, max_aliases=20) as store:
        for i in range(21):
            add(store, f"n{i}.md", f"new{i}")
            store.register_source_alias(f"old{i}", f"new{i}")
        assert len(store.aliases()) == alias_low_water(20) == 18
        before = store.aliases()
        add(store, "late.md", "late-new")
        store.register_source_alias("late-old", "late-new")
        assert store.aliases() == {**before, "late-old": "late-new"}


def test_compaction_inside_a_failed_step_is_rolled_back_with_it(state_path: Path) -> None:
    with open_store(state_path, max_conversations=1) as store:
        store.record_turn(NB, "c1", "q", "a", [], [], {})
        try:
            with store.step():
                store.record_turn(NB, "c2", "q", "a", [], [], {})
                raise RuntimeError("crash in the middle")
        except RuntimeError:
            pass
        assert store.conversations(NB) == ["c1"]
