"""The README cannot drift: its commands, settings and exit codes are the program's, and CI runs its test command."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import typer.main

from nlmsync import errors
from nlmsync.cli import app
from nlmsync.config import Settings

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title: str) -> str:
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", README, flags=re.DOTALL | re.MULTILINE)
    assert match, f"README has no section '## {title}'"
    return match.group(1)


def _table_first_column(section: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)`", section, flags=re.MULTILINE)]


def test_quick_start_has_exactly_two_commands_the_second_runs_the_tests() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", _section("Quick start"), flags=re.DOTALL)
    assert len(blocks) == 2
    assert all("\n" not in block for block in blocks)
    assert " ask " in blocks[0] and "--server fake" in blocks[0]
    assert "pytest" in blocks[1]


def test_ci_runs_the_readme_test_command() -> None:
    script = ROOT / ".ci" / "run"
    extract = re.search(r"test_command=\$\((.*)\)\n", script.read_text(encoding="utf-8"))
    assert extract
    out = subprocess.run(["bash", "-c", extract.group(1)], cwd=ROOT, capture_output=True, text=True, check=True)
    second = re.findall(r"```sh\n(.*?)\n```", _section("Quick start"), flags=re.DOTALL)[1]
    assert out.stdout.strip() == second


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    documented = {name.split()[0] for name in _table_first_column(_section("Commands"))}
    assert documented == set(commands)


def test_every_setting_is_documented_with_its_default() -> None:
    rows = {m.group(1): m.group(2).strip() for m in
            re.finditer(r"^\| `(\w+)` \| ([^|]*) \|", _section("Configuration"), flags=re.MULTILINE)}
    assert set(rows) == set(Settings.model_fields)
    for key, field in Settings.model_fields.items():
        if field.default_factory is None and field.default is not None and key != "vault":
            assert rows[key] == str(field.default), key


def test_exit_code_table_matches_the_error_module() -> None:
    documented = {int(code) for code in re.findall(r"^\| (\d) \|", _section("Exit codes"), flags=re.MULTILINE)}
    defined = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert documented == defined


def test_every_command_with_json_output_has_its_document_described() -> None:
    commands = typer.main.get_command(app).commands  # type: ignore[attr-defined]
    with_json = {name for name, command in commands.items()
                 if any("--json" in param.opts for param in command.params)}
    documented = {name.split()[0] for name in _table_first_column(_section("JSON output"))}
    assert documented == with_json
