"""`nlmsync check`: the state file read whole; a damaged one is exit 2 and left as it is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


def test_check_reads_a_healthy_state_file_and_says_so(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "check", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["exists"] is False
    assert run(capsys, "--vault", str(vault), "index")[0] == 0
    code, out, err = run(capsys, "--vault", str(vault), "check")
    assert (code, err) == (0, "")
    assert "ok, every page read" in out


def test_check_refuses_a_damaged_state_file_with_exit_2_and_changes_nothing(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--vault", str(vault), "index")[0] == 0
    state = vault / ".nlmsync" / "state.db"
    data = bytearray(state.read_bytes())
    page = 4096
    for n in range(len(data) // page // 2, len(data) // page):
        data[n * page: n * page + 16] = b"\xff" * 16
    state.write_bytes(bytes(data))
    code, out, err = run(capsys, "--vault", str(vault), "check", "--json")
    assert code == 2 and json.loads(out)["exit_code"] == 2 and json.loads(out)["error"] in err
    assert err.startswith(f"nlmsync: error: {state}: state file is not a usable nlmsync database")
    assert "nlmsync: hint: move it aside" in err
    assert state.read_bytes() == bytes(data)


@pytest.mark.parametrize("command", [["check"], ["--server", "fake", "status"], ["index"]])
def test_a_state_file_that_is_a_device_is_refused_alike_by_every_command(
        vault: Path, capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    state = vault / ".nlmsync" / "state.db"
    state.parent.mkdir()
    state.symlink_to(os.devnull)  # reads as an empty file: a new state file, to a look at its bytes alone
    code, out, err = run(capsys, "--vault", str(vault), *command)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        f"nlmsync: error: {state}: a state file is a regular file, not a character device",
        "nlmsync: hint: point --state at a file, or at a path where none is yet"]
    assert state.is_symlink()


def test_check_refuses_a_fifo_without_waiting_for_a_writer(vault: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "state.fifo"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "--vault", str(vault), "--state", str(fifo), "check")
    assert code == 2 and err.startswith(f"nlmsync: error: {fifo}: a state file is a regular file, not a FIFO"), err


def test_check_counts_the_notes_and_attachments_synced_while_another_run_writes(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.documents.pdfs import pdf, text_page

    from nlmsync.store import StateStore

    vault = tmp_path / "vault"
    (vault / "papers").mkdir(parents=True)
    (vault / "a.md").write_text("# A\nalpha\n", encoding="utf-8")
    (vault / "b.md").write_text("# B\nbeta\n", encoding="utf-8")
    (vault / "papers" / "tapirs.pdf").write_bytes(pdf(text_page("Tapirs are odd-toed ungulates")))
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Reading",
                         "refresh", "--all", "--json")
    assert code == 0, err
    notebook_id = json.loads(out)["notebook_id"]
    state = vault / ".nlmsync" / "state.db"
    store = StateStore.open(state)
    try:
        with store.writer():  # another run holds the writer lock, in the middle of a write
            store.db.conn.execute("BEGIN IMMEDIATE")
            store.db.conn.execute("DELETE FROM source_mappings")
            code, out, err = run(capsys, "--vault", str(vault), "check", "--json")
            assert (code, err) == (0, "")
            (counted,) = json.loads(out)["notebooks"]
            assert {k: counted[k] for k in ("notebook_id", "notes", "attachments")} == {
                "notebook_id": notebook_id, "notes": 2, "attachments": 1}
            code, out, err = run(capsys, "--vault", str(vault), "check")
            assert (code, err) == (0, "")
            assert out.splitlines()[1].endswith(": 2 notes and 1 attachment synced")
            store.db.conn.execute("ROLLBACK")
    finally:
        store.close()


def test_check_of_a_state_file_not_made_yet_creates_none(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    state = tmp_path / "elsewhere" / "state.db"
    code, out, err = run(capsys, "--vault", str(vault), "--state", str(state), "check", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out) | {"schema_version": None} == {"schema_version": None, "state_file": str(state),
                                                           "exists": False, "notebooks": []}
    assert not state.parent.exists() and not (vault / ".nlmsync").exists()
