"""A vault that is not a folder — a mistyped `--vault`, a file — is what every command says first, in the same
words and with exit 2, before it reads a setting's state file or a server: a cron job's health check with a wrong
path fails, and a search, a refresh and a status do not each word it their own way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run

from nlmsync.cli._context import COMMAND_MODULES, WITHOUT_GLOBAL_OPTIONS

# The arguments a command cannot run without.
REQUIRED = {"search": ["heapsort"], "ask": ["How does heapsort work?"]}
VAULT_COMMANDS = [c for c in COMMAND_MODULES if c not in WITHOUT_GLOBAL_OPTIONS]


@pytest.mark.parametrize("command", VAULT_COMMANDS)
def test_every_command_refuses_a_vault_that_does_not_exist_in_one_wording(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    missing = tmp_path / "mistyped"
    code, out, err = run(capsys, "--vault", str(missing), "--server", "fake", "--notebook", "nb", command,
                         *REQUIRED.get(command, []))
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"nlmsync: error: {missing}: the vault does not exist"
    assert not missing.exists()


@pytest.mark.parametrize("command", ["check", "search", "status"])
def test_a_file_given_as_the_vault_is_refused_as_not_a_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    file = tmp_path / "notes.md"
    file.write_text("# A note, not a vault\n", encoding="utf-8")
    code, out, err = run(capsys, "--vault", str(file), command, *REQUIRED.get(command, []), "--json")
    assert code == 2 and json.loads(out)["exit_code"] == 2
    assert err.splitlines()[0] == f"nlmsync: error: {file}: the vault is not a folder"
