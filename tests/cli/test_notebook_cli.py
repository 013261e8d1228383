"""`nlmsync notebooks` and `nlmsync conversations` in process: how a user finds a notebook id, and reads back
what was asked, with the notes each answer relied on."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.cli_helpers import fake_state
from tests.cli_helpers import run_cli as run

from nlmsync.cli._output import relative_time
from nlmsync.config import Settings
from nlmsync.fake import FakeNotebookLM
from nlmsync.store import SourceMapping, StateStore


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".nlmsync").mkdir(parents=True)
    (root / "heapsort.md").write_text("# Heapsort\nA max-heap.", encoding="utf-8")
    return root


def _fake_with_notebooks(vault: Path) -> tuple[str, str]:
    fake = FakeNotebookLM(state_path=fake_state(vault))
    first = fake.apply("notebook_create", {"title": "Algorithms"})["notebook_id"]
    for n in range(3):
        fake.apply("source_add", {"notebook_id": first, "source_type": "text", "text": f"t{n}", "title": f"n{n}"})
    second = fake.apply("notebook_create", {"title": "Physics"})["notebook_id"]
    fake.save()
    return first, second


def test_notebooks_lists_id_title_and_source_count(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = _fake_with_notebooks(vault)
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "notebooks", "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["schema_version"] == 1 and document["notebook_count"] == 2
    assert {(nb["id"], nb["title"], nb["source_count"], nb["default"]) for nb in document["notebooks"]} == {
        (first, "Algorithms", 3, False), (second, "Physics", 0, False)}

    with StateStore.open(vault / ".nlmsync" / "state.db") as store:  # the vault's notebook is marked
        store.set_default_notebook(second)
    code, out, _ = run(capsys, "notebooks", "--vault", str(vault), "--server", "fake")
    assert code == 0
    lines = out.splitlines()
    assert any(line.startswith(f"  {first}") and "3 sources" in line and line.endswith("Algorithms")
               for line in lines), out
    assert any(line.startswith(f"* {second}") and line.endswith("Physics") for line in lines), out


def test_notebooks_with_none_says_how_to_create_one(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "notebooks")
    assert code == 0 and "--notebook new:TITLE" in out


def _conversations(vault: Path) -> None:
    with StateStore.open(vault / ".nlmsync" / "state.db") as store:
        store.upsert_mapping(SourceMapping(notebook_id="nb1", path="heapsort.md", source_id="s-heap",
                                           content_hash="h", title="heapsort.md · 01"))
        store.upsert_mapping(SourceMapping(notebook_id="nb1", path="sorting.md", source_id="s-sort",
                                           content_hash="h2", title="sorting.md · 02"))
        store.record_turn("nb1", "c0ffee-1", "How does heapsort work?", "It builds a max-heap [1].",
                          ["s-heap", "s-other"], ["heapsort.md", "gone.md"], {"1": "s-heap", "2": "s-sort"})
        store.record_turn("nb1", "c0ffee-1", "And its cost?", "n log n.", ["s-heap"], ["heapsort.md"], {})
        store.record_turn("nb1", "c0ffee-2", "What is entropy?", "Disorder.", [], [], {})


def test_conversations_lists_newest_first(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _conversations(vault)
    code, out, err = run(capsys, "--vault", str(vault), "conversations", "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert document["schema_version"] == 1 and document["conversation_count"] == 2
    assert [(c["conversation_id"], c["turn_count"], c["first_question"]) for c in document["conversations"]] == [
        ("c0ffee-2", 1, "What is entropy?"), ("c0ffee-1", 2, "How does heapsort work?")]
    first = document["conversations"][1]
    assert first["started_at"] < first["last_asked_at"]

    code, out, _ = run(capsys, "--vault", str(vault), "conversations")
    assert code == 0
    assert out.splitlines()[1].startswith("c0ffee-1") and "2 turns" in out and "How does heapsort work?" in out
    one = next(line for line in out.splitlines() if line.startswith("c0ffee-2"))
    assert " 1 turn " in one and "turns" not in one  # one turn, in the singular


def test_conversations_show_gives_each_turn_and_the_notes_it_relied_on(vault: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _conversations(vault)
    code, out, err = run(capsys, "--vault", str(vault), "conversations", "show", "c0ffee-1", "--json")
    assert (code, err) == (0, "")
    document = json.loads(out)
    assert (document["notebook_id"], document["conversation_id"], document["turn_count"]) == ("nb1", "c0ffee-1", 2)
    first, second = document["turns"]
    assert (first["question"], first["answer"]) == ("How does heapsort work?", "It builds a max-heap [1].")
    assert first["cited_paths"] == ["heapsort.md", "sorting.md"] and first["selected_paths"] == ["heapsort.md", "gone.md"]
    assert first["source_ids"] == ["s-heap", "s-other"] and second["cited_paths"] == []

    code, out, _ = run(capsys, "conversations", "show", "c0ffee-1", "--vault", str(vault))
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "conversation c0ffee-1 · notebook nb1 · 2 turns"
    assert re.fullmatch(r"1\. How does heapsort work\?  \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d", lines[2])
    assert lines[3:6] == ["It builds a max-heap [1].", "cited: heapsort.md, sorting.md",
                          "selected: heapsort.md, gone.md"]
    assert lines[7].startswith("2. And its cost?  ") and lines[8:] == ["n log n.", "selected: heapsort.md"]


def test_conversations_show_names_each_cited_note_once_and_skips_sources_no_note_holds(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two citations of one note name it once; a cited source no note maps to any more (deleted since) names none,
    and a turn whose query record the state file dropped (compaction keeps fewer records than messages) is still
    shown, with no notes."""
    with StateStore.open(vault / ".nlmsync" / "state.db",
                         Settings(max_query_records_per_conversation=1)) as store:
        store.upsert_mapping(SourceMapping(notebook_id="nb1", path="heapsort.md", source_id="s-heap",
                                           content_hash="h", title="heapsort.md · 01"))
        store.record_turn("nb1", "c1", "Oldest?", "Long ago.", ["s-heap"], ["heapsort.md"], {"1": "s-heap"})
        store.record_turn("nb1", "c1", "How does heapsort work?", "A max-heap [1] [2] [3].", ["s-heap", "s-gone"],
                          ["heapsort.md"], {"1": "s-heap", "2": "s-gone", "3": "s-heap"})
        store.compact()
    code, out, err = run(capsys, "--vault", str(vault), "conversations", "show", "c1", "--json")
    assert (code, err) == (0, "")
    first, second = json.loads(out)["turns"]
    assert (first["question"], first["selected_paths"], first["cited_paths"], first["source_ids"]) == (
        "Oldest?", [], [], [])
    assert (second["cited_paths"], second["source_ids"]) == (["heapsort.md"], ["s-heap", "s-gone"])


@pytest.mark.parametrize(("words", "said"), [
    (["show", "c0ffee"], ["nlmsync: error: 'c0ffee' starts 2 conversation ids: give more of it",
                          "nlmsync: hint: nlmsync conversations lists them"]),
    (["show", "nope"], ["nlmsync: error: no conversation 'nope'", "nlmsync: hint: nlmsync conversations lists them"]),
    (["remove", "c0ffee-1"], ["nlmsync: error: conversations: expected 'list' or 'show ID', got 'remove c0ffee-1'"]),
])
def test_conversations_bad_request_is_one_line_exit_2(vault: Path, capsys: pytest.CaptureFixture[str],
                                                      words: list[str], said: list[str]) -> None:
    _conversations(vault)
    code, out, err = run(capsys, "--vault", str(vault), "conversations", *words)
    assert (code, out, err.splitlines()) == (2, "", said)


def test_conversations_show_without_a_state_file_says_nothing_was_asked(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(tmp_path), "conversations", "show", "c0ffee")
    assert (code, out) == (2, "")
    assert err.splitlines() == ["nlmsync: error: no conversation 'c0ffee': nothing was asked with this state file yet"]


def test_conversations_without_a_state_file_creates_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(tmp_path), "conversations")
    assert code == 0 and "No conversations yet" in out
    assert not (tmp_path / ".nlmsync").exists()


def test_relative_time() -> None:
    now = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    assert [relative_time(now - delta, now) for delta in (
        timedelta(seconds=2), timedelta(seconds=40), timedelta(minutes=5), timedelta(hours=3), timedelta(days=1),
        timedelta(days=9), timedelta(days=90))] == [
        "just now", "40 s ago", "5 min ago", "3 h ago", "1 day ago", "9 days ago", "2026-08-25"]
    # each unit from its first whole count
    assert [relative_time(now - timedelta(seconds=s), now) for s in (0, 4.9, 5, 59.9, 60, 3599, 3600)] == [
        "just now", "just now", "5 s ago", "59 s ago", "1 min ago", "59 min ago", "1 h ago"]
    assert [relative_time(now - timedelta(days=d), now) for d in (2, 29.9, 30)] == [
        "2 days ago", "29 days ago", "2026-10-24"]
    # a time ahead of the clock (another machine's) is given as it is, local and to the second
    ahead = relative_time(now + timedelta(seconds=1, microseconds=250), now)
    assert re.fullmatch(r"2026-11-2[234]T\d\d:\d\d:01[+-]\d\d:\d\d", ahead), ahead


def test_an_unknown_notebook_id_points_at_the_listing(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = FakeNotebookLM(state_path=fake_state(vault))
    for n in range(6):
        fake.apply("notebook_create", {"title": f"N{n}"})
    fake.save()
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "nb-typo", "status")
    assert code == 2 and out == ""
    assert "('nlmsync notebooks' lists them)" in err.splitlines()[1]


def test_times_are_relative_on_a_terminal_and_iso_otherwise(vault: Path, capsys: pytest.CaptureFixture[str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from rich.console import Console

    from nlmsync.cli import _output

    _conversations(vault)
    code, out, _ = run(capsys, "--vault", str(vault), "conversations")
    assert code == 0 and "ago" not in out
    assert any(line.startswith("c0ffee-2") and "+00:00" in line for line in out.splitlines()), out

    terminal = Console(force_terminal=True, highlight=False, soft_wrap=True, color_system=None)
    monkeypatch.setattr(_output, "stdout_console", lambda: terminal)
    code, out, _ = run(capsys, "--vault", str(vault), "conversations")
    line = next(line for line in out.splitlines() if line.startswith("c0ffee-2"))
    assert code == 0 and ("just now" in line or " s ago" in line) and "+00:00" not in line


@pytest.mark.parametrize("command", [["conversations"], ["conversations", "show", "abc"],
                                     ["--server", "fake", "notebooks"]])
def test_a_state_file_that_is_a_folder_is_refused_not_taken_for_none(vault: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     command: list[str]) -> None:
    folder = tmp_path / "state-folder"
    folder.mkdir()
    code, out, err = run(capsys, "--vault", str(vault), "--state", str(folder), *command)
    assert code == 2 and out == ""
    assert err.startswith(f"nlmsync: error: {folder}: state file is not a usable nlmsync database")


@pytest.fixture
def _in_kolkata(monkeypatch: pytest.MonkeyPatch):
    """Local time 5 h 30 min ahead of UTC (no daylight saving): a time in UTC cannot pass for local."""
    import time

    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("_in_kolkata")
def test_conversations_print_local_time_as_status_does(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from nlmsync.cli._output import when

    assert when("2026-11-23T20:00:00+00:00") == "2026-11-24T01:30:00+05:30"
    assert relative_time(datetime(2026, 8, 25, 20, 0, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC)) == "2026-08-26"
    code, _, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Times", "ask",
                       "How does a max-heap work?")
    assert code == 0, err
    code, out, _ = run(capsys, "--vault", str(vault), "conversations")
    assert code == 0 and "+05:30" in out and "+00:00" not in out


def test_the_fake_keeps_its_notebooks_out_of_the_vault(vault: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool that syncs the vault's folder must not carry the fake's notebooks to every device: they are in the
    user's state directory, one folder per vault; those an older nlmsync kept in the vault are moved there."""
    state_home = tmp_path / "state-home"
    monkeypatch.setenv("XDG_STATE_HOME", str(state_home))
    older = FakeNotebookLM(state_path=vault / ".nlmsync" / "fake-notebooklm.json")  # where they were kept
    kept = older.apply("notebook_create", {"title": "Kept"})["notebook_id"]
    older.save()
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", kept, "refresh",
                         "heapsort.md", "--json")
    assert code == 0, err
    assert json.loads(out)["notebook_id"] == kept  # the notebook is still there
    assert sorted(p.name for p in (vault / ".nlmsync").iterdir() if p.name.startswith("fake")) == []
    assert fake_state(vault).is_file() and fake_state(vault).is_relative_to(state_home / "nlmsync" / "fake")
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("# A\n", encoding="utf-8")
    code, out, _ = run(capsys, "--vault", str(other), "--server", "fake", "notebooks", "--json")
    assert code == 0 and json.loads(out)["notebook_count"] == 0  # another vault, another fake account
