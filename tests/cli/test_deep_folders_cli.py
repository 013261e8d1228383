"""A vault whose folders nest deeper than Python's recursion limit is indexed, searched and mirrored whole; a folder
whose path is longer than the system takes is skipped with the reason, and the rest of the vault goes on."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli
from tests.deep_folders import nested_folders


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


@pytest.mark.slow
def test_index_search_and_refresh_all_take_the_note_at_the_bottom_of_a_deep_vault(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with nested_folders(vault, sys.getrecursionlimit() + 100, "d", "trench.md") as deep:
        code, out, err = run_cli(capsys, "--vault", str(vault), "index", "--json")
        assert code == 0, err
        assert not [s for s in json.loads(out)["skipped_notes"] if s["path"].startswith("d/")]
        code, out, err = run_cli(capsys, "--vault", str(vault), "search", "abyssal trenches", "--json")
        assert code == 0, err
        assert json.loads(out)["results"][0]["path"] == deep
        code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Deep",
                                 "refresh", "--all", "--json")
        assert code == 0, err
        branches = {note["path"]: note["branch"] for note in json.loads(out)["notes"]}
        assert branches[deep] == "added"


def test_index_names_a_folder_too_long_for_the_system_and_indexes_the_rest(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    name = "folder-" + "x" * 200
    with nested_folders(vault, os.pathconf(vault, "PC_PATH_MAX") // len(name) + 2, name, "trench.md") as deep:
        code, out, err = run_cli(capsys, "--vault", str(vault), "index", "--json")
        assert code == 0, err
        document = json.loads(out)
        (skipped,) = [s for s in document["skipped_notes"] if s["path"].startswith(name)]
        assert deep.startswith(skipped["path"] + "/")
        assert skipped["reason"] == f"unreadable folder ({os.strerror(errno.ENAMETOOLONG)})"
        code, out, err = run_cli(capsys, "--vault", str(vault), "search", "heapsort", "--json")
        assert code == 0 and json.loads(out)["results"], err
