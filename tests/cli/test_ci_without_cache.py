"""The CI job of docs/ci.md, run as documented against the fake: each run is a clean checkout of the vault with
no state file, and only the fake's notebook (its state file) is shared between them. The second run of an
unchanged vault uploads nothing; a changed note costs its own pack; every note stays in exactly one source."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run
from tests.conftest import FIXTURE_VAULT

from nlmsync.fake import FakeNotebookLM


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


def checkout(tmp_path: Path, name: str) -> Path:
    """A clean checkout of the vault repository: the notes, no `.nlmsync/`."""
    target = tmp_path / name
    shutil.copytree(FIXTURE_VAULT, target, symlinks=True, ignore=shutil.ignore_patterns(".nlmsync"))
    return target


def sources(state: Path) -> dict[str, str]:
    (notebook,) = FakeNotebookLM(state_path=state).notebooks.values()
    return {s.id: s.title for s in notebook.sources.values()}


@pytest.mark.parametrize("pack", ["auto", "always"])
def test_a_runner_with_no_state_file_uploads_only_what_changed(tmp_path: Path, pack: str, monkeypatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / "notebook.json"
    monkeypatch.setenv("NLMSYNC_PACK", pack)

    def mirror(vault: Path) -> dict:
        code, out, err = run(capsys, "--vault", str(vault), "--server", f"fake --state {state}", "--notebook",
                             "new:Notes", "refresh", "--all", "--json")
        assert code == 0, err
        return json.loads(out)

    first = mirror(checkout(tmp_path, "run-1"))
    held = sources(state)
    assert held and any(n["branch"] == "added" for n in first["notes"] + first["packs"])

    second = mirror(checkout(tmp_path, "run-2"))
    assert sources(state) == held  # nothing uploaded, nothing deleted
    assert all(item["branch"] in ("reused", "excluded") for item in second["notes"] + second["packs"])
    assert second["notices"][0].startswith("using notebook") and second["notices"][1].startswith("adopted ")

    changed = checkout(tmp_path, "run-3")
    note = changed / "algorithms" / "sorting" / "heapsort.md"
    note.write_text(note.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    mirror(changed)
    after = sources(state)
    assert len(set(after) - set(held)) == 1 and len(set(held) - set(after)) == 1  # one source replaced
    fourth = mirror(changed)
    assert sources(state) == after and all(n.startswith("using notebook") for n in fourth["notices"])
