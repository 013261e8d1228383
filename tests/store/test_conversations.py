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


def test_conversations_are_summarised_most_recent_first_and_found_by_the_start_of_their_id(store: StateStore) -> None:
    store.record_turn(NB, "conv-a1", "How does heapsort work?", "a", [], [], {})
    store.record_turn(NB, "conv-b2", "What is a heap?", "b", [], [], {})
    store.record_turn("nb-2", "conv-a9", "Elsewhere?", "c", [], [], {})
    store.record_turn(NB, "conv-a1", "And its worst case?", "d", [], [], {})
    summaries = store.conversation_summaries(NB)
    assert [(s.conversation_id, s.turn_count, s.first_question) for s in summaries] == [
        ("conv-a1", 2, "How does heapsort work?"), ("conv-b2", 1, "What is a heap?")]
    first = summaries[0]
    assert first.notebook_id == NB and first.started_at <= first.last_asked_at
    assert [(s.notebook_id, s.conversation_id) for s in store.conversation_summaries()] == [
        (NB, "conv-a1"), ("nb-2", "conv-a9"), (NB, "conv-b2")]
    assert store.find_conversations("conv-a") == [(NB, "conv-a1"), ("nb-2", "conv-a9")]
    assert store.find_conversations("conv-b2") == [(NB, "conv-b2")]
    assert store.find_conversations("conv-b23") == [] and store.find_conversations("onv") == []
