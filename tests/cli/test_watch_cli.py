"""`nlmsync watch` as a user or a service manager runs it: a real process, a file change, then Ctrl-C (SIGINT)
or SIGTERM — both stop it cleanly: exit 0, the summary, a consistent state file."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import environment_without_settings

from nlmsync.store import StateStore


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_stops_watch_cleanly_with_one_json_document(tmp_path: Path, stop: signal.Signals):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "old.md").write_text("# Old\n\nkept\n", encoding="utf-8")
    env = environment_without_settings()
    with subprocess.Popen([sys.executable, "-m", "nlmsync", "--vault", str(vault), "watch", "--json",
                           "--debounce-ms", "50"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env) as proc:
        assert proc.stderr is not None
        try:
            assert proc.stderr.readline().startswith("Watching ")  # printed once the watch is running
            (vault / "new.md").write_text("# New\n\nzeppelin airship\n", encoding="utf-8")
            assert proc.stderr.readline().strip() == "index: 1 changed, 0 removed"
            proc.send_signal(stop)
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert "Stopped; state is consistent." in err and "Traceback" not in err
    summary = json.loads(out)  # the one JSON document on stdout
    assert summary["schema_version"] == 1
    assert summary["modified_paths"] == ["new.md"] and summary["batch_count"] == 1
    assert summary["events"] == [{"kind": "indexed", "modified_paths": ["new.md"], "deleted_paths": []}]
    with StateStore.open(vault / ".nlmsync" / "state.db") as store:
        assert store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert {row[0] for row in store.db.execute("SELECT path FROM index_docs")} == {"old.md", "new.md"}


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_watch_on_a_vault_that_does_not_exist_is_bad_input(tmp_path: Path, capsys, json_flag: list[str]):
    from tests.cli_helpers import run_cli

    missing = tmp_path / "nonexistent"
    code, out, err = run_cli(capsys, "--vault", str(missing), "watch", *json_flag)
    assert code == 2 and (json.loads(out)["exit_code"] == 2 if json_flag else out == "")
    assert err.startswith("nlmsync: error: ") and str(missing) in err and "unexpected" not in err
    assert len(err.splitlines()) == 1 and not missing.exists()
