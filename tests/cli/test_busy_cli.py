"""Busy is exit 7 with one line saying who holds the vault: `nlmsync.cli.main` in-process against a holder
process (the fake server still runs as a subprocess)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run

from nlmsync.store import StateStore

HOLDER = """
import sys
from pathlib import Path
from nlmsync.store import StateStore
store = StateStore.open(Path(sys.argv[1]))
sys.argv = ["nlmsync", "--vault", "notes", "refresh", "--all"]  # what the lock records
with store.writer():
    print("locked", flush=True)
    sys.stdin.readline()
"""


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.parametrize("command", [["refresh", "--all"], ["ask", "heapsort"], ["reconcile"]])
def test_another_nlmsync_holding_the_vault_is_busy_exit_7_naming_it(tmp_path: Path, capsys, monkeypatch,
                                                                    command: list[str]):
    monkeypatch.setattr(StateStore, "writer_timeout", 0.2)  # 10 s in real runs
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "heapsort.md").write_text("# Heapsort\n\nsift down\n", encoding="utf-8")
    state = vault / ".nlmsync" / "state.db"
    StateStore.open(state).close()
    with subprocess.Popen([sys.executable, "-c", HOLDER, str(state)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        try:
            code, _, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Busy",
                                 *command, "--json")
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
    assert code == 7
    lines = err.splitlines()
    assert lines[0] == (f"nlmsync: error: another nlmsync is running on this vault "
                        f"(pid {holder.pid}: nlmsync --vault notes refresh --all)")
    assert lines[1].startswith("nlmsync: hint: safe to run again") and len(lines) == 2
