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
