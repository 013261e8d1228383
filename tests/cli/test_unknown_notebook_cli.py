"""An unknown notebook id is bad input: exit 2 and one line, with a hint that names the notebooks the server
has — `nlmsync.cli.main` in-process (the fake server runs as a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli as run


def test_unknown_notebook_id_is_exit_2_with_a_hint_naming_the_servers_notebooks(tmp_path: Path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "heapsort.md").write_text("# Heapsort\n\nsift down\n", encoding="utf-8")
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Real", "refresh",
                       "--all", "--json")
    assert code == 0
    real = json.loads(out)["notebook_id"]

    for command in (["refresh"], ["status"]):  # every command: tests/app/test_unknown_notebook.py
        code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "no-such-notebook",
                             *command)
        assert (code, out) == (2, ""), command
        assert err.splitlines() == [
            "nlmsync: error: notebook no-such-notebook not found on the NotebookLM server",
            (f"nlmsync: hint: this server has: {real} (Real) ('nlmsync notebooks' lists them); "
             "pass one with --notebook ID, "
            "or --notebook new:TITLE creates one")], command


def test_no_notebook_given_names_the_vault_and_the_servers_notebooks(tmp_path: Path, capsys, monkeypatch):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "heapsort.md").write_text("# Heapsort\n\nsift down\n", encoding="utf-8")
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Real", "refresh",
                       "--json")
    assert code == 0
    real = json.loads(out)["notebook_id"]
    for lost in (vault / ".nlmsync").glob("state.db*"):  # a state file lost: the server still has the notebook
        lost.unlink()
    hint = (f"nlmsync: hint: this server has: {real} (Real) ('nlmsync notebooks' lists them); pass one with "
            "--notebook ID, or --notebook new:TITLE creates one")
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "status")
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"nlmsync: error: no notebook given, and none was used before with the vault {vault}",
                                hint]
    monkeypatch.chdir(vault)  # no --vault: the vault is the current folder, and the error says so
    code, out, err = run(capsys, "--server", "fake", "ask", "How does heapsort work?")
    assert (code, out) == (2, "")
    assert err.splitlines() == [f"nlmsync: error: no notebook given, and none was used before with the vault {vault} "
                                "(the current folder; --vault DIR names another)", hint]
    assert not (vault / ".nlmsync" / "state.db").exists()  # nothing is made for a run that cannot start
