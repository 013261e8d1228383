"""The README cannot drift: its commands, settings and exit codes are the program's, and CI runs its test command."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import typer.main

from nlmsync import errors
from nlmsync.cli import app, main
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


def test_the_ci_example_runs_against_the_fake(tmp_path: Path, monkeypatch, capsys) -> None:
    """Every `nlmsync` step of the README's GitHub Actions job, run as written on a copy of the fixture vault."""
    import json
    import shlex
    import shutil

    yaml = re.search(r"```yaml\n(.*?)\n```", _section("CI smoke runs against the fake"), flags=re.DOTALL)
    assert yaml
    steps = [line.split("run: ", 1)[1] for line in yaml.group(1).splitlines() if "run: nlmsync " in line]
    assert len(steps) == 3 and any("refresh --all --dry-run" in s for s in steps) and any(" ask " in s for s in steps)
    shutil.copytree(ROOT / "fixtures" / "vault", tmp_path / "notes", ignore=shutil.ignore_patterns(".nlmsync"))
    monkeypatch.chdir(tmp_path)
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    for step in steps:
        words = shlex.split(step.split(" > ")[0])
        assert words[0] == "nlmsync"
        try:
            main(words[1:])
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        assert code == 0, (step, err)
        document = json.loads(out)
        assert document["schema_version"] == 1, step
