"""PATH arguments are named from where the user stands; the app takes them relative to the vault."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli

from nlmsync.cli.paths import vault_relative_args


def test_an_argument_found_from_the_current_folder_inside_the_vault_becomes_vault_relative(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(vault / "algorithms")
    assert vault_relative_args(vault, ["sorting/heapsort.md", "sorting", ".",
                                       str(vault / "algorithms" / "sorting" / "heapsort.md")]) == [
        "algorithms/sorting/heapsort.md", "algorithms/sorting", "algorithms", "algorithms/sorting/heapsort.md"]


def test_any_other_argument_is_passed_on_as_written(vault: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("# not in the vault\n", encoding="utf-8")
    monkeypatch.chdir(vault)
    args = ["./algorithms/sorting/heapsort.md", "gone/note.md", str(outside), "../outside.md"]
    assert vault_relative_args(vault, args) == args


def test_refresh_from_a_folder_of_the_vault_takes_the_note_named_from_there(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(vault / "algorithms")
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Paths",
                             "refresh", "--dry-run", "--json", "sorting/heapsort.md")
    assert code == 0, err
    assert [n["path"] for n in json.loads(out)["notes"]] == ["algorithms/sorting/heapsort.md"]


def test_a_bad_path_in_the_default_vault_says_the_vault_is_the_current_folder_and_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "--server", "fake", "--notebook", "new:Notes", "refresh", "notes/a.md")
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "nlmsync: error: notes/a.md: no such note in the vault",
        f"nlmsync: hint: the vault is the current folder ({tmp_path}); pass --vault DIR to name another"]
    assert list(tmp_path.iterdir()) == []  # no .nlmsync/ in a folder that may not be a vault at all


@pytest.mark.parametrize("args", [["refresh"], ["refresh", "--all"]])
@pytest.mark.parametrize("name", ["a" * 300 + ".md", "a" * 300 + "/note.md"], ids=["note", "folder"])
def test_a_name_longer_than_the_system_takes_is_no_such_note(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        args: list[str], name: str) -> None:
    for variable in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(variable)
    monkeypatch.chdir(tmp_path)  # looked for from the current folder first, then in the vault
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Paths", *args,
                             name)
    assert (code, out) == (2, "")
    assert err.startswith(f"nlmsync: error: {name}: no such note in the vault") and err.count("\n") == 1, err
