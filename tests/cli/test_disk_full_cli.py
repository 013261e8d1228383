"""The commands when there is no room to write, or the state file cannot be written: one line, the exit code of
the table (7: run again once there is room; 2: the state file cannot be written here), never success for a
save that did not happen, and a repeat that finishes the job once there is room."""

from __future__ import annotations

import errno
import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.cli_helpers import fake_state
from tests.cli_helpers import run_cli as run

from nlmsync.errors import DiskFullError
from nlmsync.fake import FakeNotebookLM
from nlmsync.store import StateStore
from nlmsync.store import db as state_db


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def disk(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[bool], None]]:
    """`disk(full)`: whether the state file can grow from now on (for every connection opened after)."""
    state = {"full": False}
    opened: list[sqlite3.Connection] = []
    connect = state_db.open_connection

    def limited(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        opened.append(conn)
        if state["full"]:
            if conn.execute("PRAGMA freelist_count").fetchone()[0]:  # free pages would take writes: none are left
                conn.execute("VACUUM")
            conn.execute(f"PRAGMA max_page_count = {conn.execute('PRAGMA page_count').fetchone()[0]}")
        return conn

    monkeypatch.setattr(state_db, "open_connection", limited)
    yield lambda full: state.update(full=full)


def one_line_error(err: str) -> str:
    lines = err.splitlines()
    assert lines and lines[0].startswith("nlmsync: error: ") and "Traceback" not in err, err
    assert all(line.startswith("nlmsync: hint: ") for line in lines[1:]), err
    return lines[0]


def test_refresh_on_a_full_disk_stops_with_exit_7_and_the_repeat_converges(vault: Path, disk,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Full"]
    code, _, err = run(capsys, *common, "refresh", "cooking/sourdough.md")  # the state file exists
    assert code == 0, err
    disk(True)
    code, out, err = run(capsys, *common, "refresh", "--all", "--json")
    assert code == 7
    assert "no space left on the device" in one_line_error(err) and "mv " not in err
    document = json.loads(out)  # what was done and recorded before, as with any stop: the run's report
    assert "notes" in document and "error" not in document, document
    assert not [p for p in (vault / ".nlmsync").iterdir() if "broken" in p.name]
    disk(False)
    code, out, err = run(capsys, *common, "refresh", "--all", "--json")
    assert code == 0, err
    fake = FakeNotebookLM(state_path=fake_state(vault))
    (notebook,) = fake.notebooks.values()
    titles = [s.title for s in notebook.sources.values()]
    assert len(titles) == len(set(titles))  # no note twice
    with StateStore.open(vault / ".nlmsync" / "state.db") as store:
        rows = store.all_mappings(notebook.id)
        assert {store.resolve_source_id(r.source_id) for r in rows} == set(notebook.sources)


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_refresh_stopped_by_a_full_disk_prints_what_it_did_and_recorded(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], json_flag: list[str]) -> None:
    from nlmsync.cli import sync_cmds
    from nlmsync.sync import Branch, NoteOutcome, RefreshReport

    done = RefreshReport(notebook_id="nb-1", source_count=1, capacity=50, notes=[
        NoteOutcome(path="cooking/sourdough.md", branch=Branch.ADDED, source_ids=["src-sourdough"])])

    def stopped_by_the_disk(*args: object, **kwargs: object) -> RefreshReport:
        error = DiskFullError(vault / ".nlmsync" / "state.db")
        error.report = done  # what the app hands up with an error that stopped a run part-way
        raise error

    monkeypatch.setattr(sync_cmds, "run_app", stopped_by_the_disk)
    code, out, err = run(capsys, "--vault", str(vault), "--notebook", "nb-1", "refresh", "--all", *json_flag)
    assert code == 7
    assert "no space left on the device" in one_line_error(err)
    if json_flag:
        assert [(n["path"], n["branch"], n["source_ids"]) for n in json.loads(out)["notes"]] == [
            ("cooking/sourdough.md", "added", ["src-sourdough"])]
    else:
        assert "cooking/sourdough.md" in out and "src-sourdough" in out and "Notebook nb-1: 1/50 sources" in out


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_index_does_not_report_success_when_its_save_fails_on_a_full_disk(vault: Path, disk, json_flag: list[str],
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--vault", str(vault), "index")
    assert code == 0, err
    words = " ".join(f"term{i}" for i in range(20_000))  # a change the index needs new pages for
    (vault / "inbox.md").write_text(f"# Inbox\n\n{words}\n", encoding="utf-8")
    disk(True)
    code, out, err = run(capsys, "--vault", str(vault), "index", *json_flag)
    # no report of an index saved: with --json the error's document, else nothing on stdout
    assert code == 7 and (set(json.loads(out)) == {"schema_version", "error", "exit_code", "hint"} if json_flag
                          else out == "")
    assert "no space left on the device" in one_line_error(err)
    disk(False)
    code, out, err = run(capsys, "--vault", str(vault), "index", "--json")
    assert code == 0 and json.loads(out)["updated_count"] == 1, err


def test_index_stops_as_busy_when_another_process_keeps_the_state_file_locked(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--vault", str(vault), "index")
    assert code == 0, err
    (vault / "inbox.md").write_text("# Inbox\n\nchanged\n", encoding="utf-8")
    other = sqlite3.connect(vault / ".nlmsync" / "state.db", isolation_level=None)
    connect = state_db.open_connection

    def locked_after_opening(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        conn.execute("PRAGMA busy_timeout = 50")  # the wait is the table's business, not this test's
        other.execute("BEGIN IMMEDIATE")  # another program writes, and keeps the file locked
        return conn

    monkeypatch.setattr(state_db, "open_connection", locked_after_opening)
    try:
        code, out, err = run(capsys, "--vault", str(vault), "index")
    finally:
        other.rollback()
        other.close()
    assert code == 7 and out == ""
    assert "locked" in one_line_error(err)


def test_index_says_so_when_the_state_file_cannot_be_written(vault: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    connect = state_db.open_connection

    def read_only(path: Path) -> sqlite3.Connection:
        conn = connect(path)
        conn.execute("PRAGMA query_only = ON")
        return conn

    monkeypatch.setattr(state_db, "open_connection", read_only)
    code, out, err = run(capsys, "--vault", str(vault), "index")
    assert code == 2 and out == ""
    assert one_line_error(err).startswith(f"nlmsync: error: {vault / '.nlmsync' / 'state.db'}: cannot write the state file")


def test_a_full_disk_under_another_file_nlmsync_writes_is_the_same_error(vault: Path, monkeypatch: pytest.MonkeyPatch,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    from nlmsync.store._lock import WriterLock

    def no_room(self: WriterLock, timeout: float) -> int:
        raise OSError(errno.ENOSPC, "No space left on device", str(self.lock_path))

    monkeypatch.setattr(WriterLock, "_lock_file", no_room)
    code, _out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Full", "refresh",
                          "cooking/sourdough.md")
    assert code == 7
    line = one_line_error(err)
    assert line == f"nlmsync: error: {vault / '.nlmsync' / 'state.db.lock'}: no space left on the device; nothing was half-written"


def test_a_full_disk_on_a_write_that_names_no_file_says_so_in_the_same_words(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An ENOSPC from a write to an open file carries no file name: the error still says what ran out."""
    from nlmsync.store._lock import WriterLock

    def no_room(self: WriterLock, timeout: float) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(WriterLock, "_lock_file", no_room)
    code, _out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Full", "refresh",
                          "cooking/sourdough.md")
    assert code == 7
    assert one_line_error(err) == ("nlmsync: error: a file nlmsync writes: no space left on the device; "
                                   "nothing was half-written")


def test_the_lock_holder_note_is_not_worth_failing_a_run_on_a_full_disk(vault: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:

    def no_room(fd: int, data: bytes, offset: int) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("nlmsync.store._lock.os.pwrite", no_room)
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Full", "refresh",
                         "cooking/sourdough.md", "--json")
    assert code == 0, err
    assert [n["branch"] for n in json.loads(out)["notes"]] == ["added"]
