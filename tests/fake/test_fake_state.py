"""The fake's tool logic: real result shapes and in-band errors, capacity, persistence and the call log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlmsync.errors import InputError
from nlmsync.fake import FakeNotebookLM, Faults, RateLimitRule
from nlmsync.fake.persistence import journal_path


def _notebook(fake: FakeNotebookLM, title: str = "N") -> str:
    return fake.apply("notebook_create", {"title": title})["notebook_id"]


def _add(fake: FakeNotebookLM, nb: str, text: str, title: str) -> dict:
    return fake.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": text, "title": title})


def test_capacity_is_enforced_with_a_clear_error() -> None:
    fake = FakeNotebookLM(capacity=2)
    nb = _notebook(fake)
    assert _add(fake, nb, "one", "a")["status"] == "success"
    assert _add(fake, nb, "two", "b")["status"] == "success"
    refused = _add(fake, nb, "three", "c")
    assert refused["status"] == "error"
    assert "maximum 2 sources" in refused["error"]
    assert len(fake.notebooks[nb].sources) == 2


def test_a_source_over_the_per_request_limit_is_refused_and_one_at_it_is_taken(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake)
    refused = _add(fake, nb, "é" * 500_001, "big")  # 1,000,002 bytes
    assert refused["status"] == "error" and "1000002 bytes (maximum 1000000" in refused["error"]
    assert _add(fake, nb, "a " * 500_000, "at the limit")["status"] == "success"  # 500,000 words
    assert [s.title for s in fake.notebooks[nb].sources.values()] == ["at the limit"]


def test_delete_needs_confirm(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake)
    sid = _add(fake, nb, "text", "t")["source_id"]
    refused = fake.apply("source_delete", {"source_id": sid})
    assert refused["status"] == "error" and "not confirmed" in refused["error"]
    assert sid in fake.notebooks[nb].sources
    assert fake.apply("source_delete", {"source_id": sid, "confirm": True})["status"] == "success"
    assert sid not in fake.notebooks[nb].sources
    assert fake.apply("source_delete", {"source_id": sid, "confirm": True})["error"] == f"Source {sid} not found."


def test_bulk_delete_counts(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake)
    ids = [_add(fake, nb, f"text {i}", f"t{i}")["source_id"] for i in range(3)]
    result = fake.apply("source_delete", {"source_ids": ",".join(ids[:2]), "confirm": True})
    assert result["deleted_count"] == 2
    assert list(fake.notebooks[nb].sources) == [ids[2]]


def test_notebook_get_shape_and_missing_notebook(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake, "Algorithms")
    sid = _add(fake, nb, "text", "notes/a.md · 1a2b")["source_id"]
    got = fake.apply("notebook_get", {"notebook_id": nb})
    assert got["notebook"]["id"] == nb and got["notebook"]["title"] == "Algorithms"
    assert got["notebook"]["source_count"] == 1
    assert got["sources"] == [{"id": sid, "title": "notes/a.md · 1a2b"}]
    missing = fake.apply("notebook_get", {"notebook_id": "nope"})
    assert missing["status"] == "error" and missing["error"] == "Notebook nope not found."


def test_empty_sources_once() -> None:
    fake = FakeNotebookLM(faults=Faults(empty_sources_once=True))
    nb = _notebook(fake)
    assert fake.apply("notebook_get", {"notebook_id": nb})["sources"] == []
    _add(fake, nb, "text", "t")
    assert fake.apply("notebook_get", {"notebook_id": nb})["sources"] == []
    assert len(fake.apply("notebook_get", {"notebook_id": nb})["sources"]) == 1


def test_query_honours_source_ids_and_conversations(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake)
    heap = _add(fake, nb, "Heapsort uses a binary heap.", "heap")["source_id"]
    quick = _add(fake, nb, "Quicksort uses a pivot and a heap of patience.", "quick")["source_id"]
    only_quick = fake.apply("notebook_query", {"notebook_id": nb, "query": "heap", "source_ids": [quick]})
    assert only_quick["sources_used"] == [quick]
    first = fake.apply("notebook_query", {"notebook_id": nb, "query": "binary heap"})
    assert first["sources_used"][0] == heap
    follow = fake.apply("notebook_query", {"notebook_id": nb, "query": "pivot",
                                           "conversation_id": first["conversation_id"]})
    assert follow["conversation_id"] == first["conversation_id"]
    assert follow["is_follow_up"] is True and follow["turn_number"] == 2
    unknown = fake.apply("notebook_query", {"notebook_id": nb, "query": "x", "conversation_id": "nope"})
    assert unknown == {"status": "error", "error": "Conversation nope not found."}
    bad_source = fake.apply("notebook_query", {"notebook_id": nb, "query": "x", "source_ids": ["zzz"]})
    assert bad_source["status"] == "error" and "zzz" in bad_source["error"]


def test_rename_and_content(fake: FakeNotebookLM) -> None:
    nb = _notebook(fake)
    sid = _add(fake, nb, "Some text here.", "old")["source_id"]
    assert fake.apply("source_rename", {"notebook_id": nb, "source_id": sid, "new_title": "new"})["title"] == "new"
    content = fake.apply("source_get_content", {"source_id": sid})
    assert content == {"status": "success", "content": "Some text here.", "title": "new", "source_type": "text",
                       "char_count": 15}


def test_auth_required_mode() -> None:
    fake = FakeNotebookLM(faults=Faults(auth_required=True))
    assert fake.apply("server_info", {})["auth_status"] == "not_configured"
    refused = fake.apply("notebook_list", {})
    assert refused["status"] == "error" and refused["error"].startswith("No authentication found")
    assert fake.calls[-1].applied is False


def test_state_file_round_trip_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "fake.json"
    fake = FakeNotebookLM(state_path=path)
    nb = _notebook(fake)
    sid = _add(fake, nb, "x" * 1000, "t")["source_id"]
    fake.apply("notebook_query", {"notebook_id": nb, "query": "x"})
    again = FakeNotebookLM(state_path=path)
    assert again.notebooks[nb].sources[sid].text == "x" * 1000
    assert again.counters == {"*": 3, "notebook_create": 1, "source_add": 1, "notebook_query": 1}
    assert [c.tool for c in again.calls] == ["notebook_create", "source_add", "notebook_query"]
    assert len(again.calls[1].arguments["text"]) < 1000
    assert again.conversations == fake.conversations
    assert not list(path.parent.glob(".fake-state-*"))


@pytest.mark.parametrize("content", ["not json", json.dumps({"format": "other"}),
                                     json.dumps({"format": "nlmsync-fake-notebooklm", "version": 99})])
def test_bad_state_file_is_an_input_error_naming_it(tmp_path: Path, content: str) -> None:
    path = tmp_path / "fake.json"
    path.write_text(content)
    with pytest.raises(InputError, match="fake.json"):
        FakeNotebookLM(state_path=path)


def test_reads_do_not_write_the_state_unless_a_fault_counts_calls(tmp_path: Path) -> None:
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(state_path=path)
    nb = _notebook(fake)
    fake.apply("notebook_get", {"notebook_id": nb})
    assert [c.tool for c in FakeNotebookLM(state_path=path).calls] == ["notebook_create"]
    fake.save()
    assert [c["tool"] for c in json.loads(path.read_text())["calls"]] == ["notebook_create", "notebook_get"]

    counted = FakeNotebookLM(faults=Faults(rate_limits=[RateLimitRule("notebook_get", 5)]),
                             state_path=tmp_path / "counted.json")
    counted.apply("notebook_list", {})
    assert FakeNotebookLM(state_path=tmp_path / "counted.json").counters == {"*": 1, "notebook_list": 1}


def test_a_call_appends_its_change_instead_of_rewriting_the_state(tmp_path: Path) -> None:
    """A call costs the size of its own change, not of the notebook: the snapshot is written only by `save()`,
    and the journal line of the 200th upload is no longer than the first's."""
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(capacity=500, state_path=path)
    nb = _notebook(fake)
    journal = journal_path(path)
    lines = []
    for i in range(200):
        _add(fake, nb, f"text of note {i:03}", f"note {i:03}")
        lines.append(journal.read_text(encoding="utf-8").splitlines()[-1])
    assert not path.exists()
    assert len(lines[-1]) <= len(lines[0]) + 10
    again = FakeNotebookLM(state_path=path)
    assert len(again.notebooks[nb].sources) == 200 and len(again.calls) == 201
    fake.save()
    assert journal.read_text(encoding="utf-8") == ""
    assert len(json.loads(path.read_text())["notebooks"][0]["sources"]) == 200


def test_replaying_the_journal_over_a_snapshot_that_holds_it_changes_nothing(tmp_path: Path) -> None:
    """A stop between writing the snapshot and emptying the journal: every change is a put or a delete, so
    replaying what the snapshot already holds leaves the same state (no call logged twice)."""
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(state_path=path)
    nb = _notebook(fake)
    sid = _add(fake, nb, "alpha", "a")["source_id"]
    fake.apply("source_rename", {"notebook_id": nb, "source_id": sid, "new_title": "b"})
    gone = _add(fake, nb, "beta", "c")["source_id"]
    fake.apply("source_delete", {"source_id": gone, "confirm": True})
    fake.apply("notebook_query", {"notebook_id": nb, "query": "alpha"})
    kept = journal_path(path).read_text(encoding="utf-8")
    fake.save()
    journal_path(path).write_text(kept + '[{"op": "call", "ind', encoding="utf-8")  # and a line cut short
    again = FakeNotebookLM(state_path=path)
    assert again.to_json() == fake.to_json()
    assert {s.id: s.title for s in again.notebooks[nb].sources.values()} == {sid: "b"}


def test_a_call_after_a_line_cut_short_is_kept_and_the_journal_stays_readable(tmp_path: Path) -> None:
    """A kill -9 mid-append leaves a last line cut short (no newline, maybe no valid JSON). The next server on
    the state file drops it before its first change, so that change is a line of its own: nothing it wrote is
    lost, and the journal reads again after it."""
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(state_path=path)
    nb = _notebook(fake)
    fake.save()
    for cut in ('[{"op": "call", "ind', '[{"op": "call"}]'):  # torn inside the JSON, and just before its newline
        with journal_path(path).open("a", encoding="utf-8") as journal:
            journal.write(cut)
        again = FakeNotebookLM(state_path=path)
        sid = _add(again, nb, f"text after {cut}", f"after {len(cut)}")["source_id"]
        _add(again, nb, "one more", f"more {len(cut)}")
        after = FakeNotebookLM(state_path=path)
        assert after.notebooks[nb].sources[sid].title == f"after {len(cut)}"
        assert after.to_json() == again.to_json()


def test_a_damaged_journal_line_is_an_input_error_naming_the_state_file(tmp_path: Path) -> None:
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(state_path=path)
    _notebook(fake)
    journal_path(path).write_text("garbage\n" + journal_path(path).read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(InputError, match=r"fake.json: cannot read fake server state: fake.json.journal line 1"):
        FakeNotebookLM(state_path=path)


def test_content_comes_back_as_indexed_blocks_not_the_bytes_sent() -> None:
    """Like the real server: paragraphs re-joined by one blank line, whitespace around them dropped."""
    fake = FakeNotebookLM()
    nb = _notebook(fake)
    sid = _add(fake, nb, "# Title\n\n\n  First paragraph\nstill first.  \n\n\nSecond.\n", "t")["source_id"]
    content = fake.apply("source_get_content", {"source_id": sid})
    assert content["content"] == "# Title\n\nFirst paragraph\nstill first.\n\nSecond."
    assert content["char_count"] == len(content["content"])


def test_stopping_after_reads_appends_them_instead_of_rewriting_the_snapshot(tmp_path: Path) -> None:
    """An idle nlmsync run against `--server "fake --state F"` reads the notebook and stops: its save costs a
    journal line, not the notebook; the snapshot is rewritten once the journal has grown to a quarter of it."""
    path = tmp_path / "fake.json"
    fake = FakeNotebookLM(capacity=500, state_path=path)
    nb = _notebook(fake)
    for i in range(50):
        _add(fake, nb, f"text of note {i:03} " * 20, f"note {i:03}")
    fake.save()
    snapshot = path.read_bytes()
    journal = journal_path(path)
    assert journal.read_text(encoding="utf-8") == ""

    idle = FakeNotebookLM(capacity=500, state_path=path)
    idle.apply("notebook_get", {"notebook_id": nb})
    idle.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": "one more", "title": "late"})
    idle.apply("notebook_get", {"notebook_id": nb})
    idle.save()
    assert path.read_bytes() == snapshot
    again = FakeNotebookLM(capacity=500, state_path=path)
    assert [c.tool for c in again.calls[-3:]] == ["notebook_get", "source_add", "notebook_get"]
    assert len(again.notebooks[nb].sources) == 51

    for i in range(20):
        _add(again, nb, f"a longer text of another note {i:03} " * 40, f"other {i:03}")
    again.save()
    assert journal.read_text(encoding="utf-8") == ""
    assert len(json.loads(path.read_text())["notebooks"][0]["sources"]) == 71
    assert len(json.loads(path.read_text())["calls"]) == len(again.calls)
