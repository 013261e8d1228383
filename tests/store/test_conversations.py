"""Notebooks, conversations, messages and query records (what conversation carry-over walks)."""

from __future__ import annotations

from tests.store.helpers import NB

from nlmsync.store import StateStore


def test_turns_are_kept_with_their_query_records_newest_first(store: StateStore) -> None:
    store.record_turn(NB, "c1", "q1", "a1", ["s1", "s2"], ["a.md", "b.md"], {"1": "s1"})
    store.record_turn(NB, "c1", "q2", "a2", ["s3"], ["c.md"], {})
    store.record_turn(NB, "c2", "other", "x", [], [], None)
    records = store.query_records(NB, "c1")
    assert [r.question for r in records] == ["q2", "q1"]
    assert records[1].source_ids == ["s1", "s2"]
    assert records[1].selected_paths == ["a.md", "b.md"]
    assert records[1].citations == {"1": "s1"}
    assert [(m.question, m.answer) for m in store.messages(NB, "c1")] == [("q1", "a1"), ("q2", "a2")]
    assert store.query_records("nb-2", "c1") == []


def test_latest_conversation_follows_the_most_recent_turn(store: StateStore) -> None:
    assert store.latest_conversation(NB) is None
    store.record_turn(NB, "c1", "q", "a", [], [], {})
    store.record_turn(NB, "c2", "q", "a", [], [], {})
    assert store.latest_conversation(NB) == "c2"
    store.record_turn(NB, "c1", "q", "a", [], [], {})
    assert store.latest_conversation(NB) == "c1"
    assert store.conversations(NB) == ["c1", "c2"]
    assert store.latest_conversation("nb-2") is None


def test_notebooks_and_default(store: StateStore) -> None:
    assert store.default_notebook() is None
    store.record_notebook("nb-a", "Physics")
    store.set_default_notebook("nb-b")
    store.record_notebook("nb-a")
    assert store.default_notebook() == "nb-b"
    assert store.notebooks() == {"nb-a": "Physics", "nb-b": None}
