"""The README and docs/ cannot drift from the program: every command, option, setting, exit code and JSON
document is documented, every command line they show uses options that exist, every link resolves, and CI
runs the README's test command."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from nlmsync import errors
from nlmsync.cli import app, main
from nlmsync.config import Settings

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 200


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _section(path: Path, title: str, level: int = 2) -> str:
    hashes = "#" * level
    match = re.search(rf"^{hashes} {re.escape(title)}\n(.*?)(?=^#{{1,{level}}} |\Z)", _text(path),
                      flags=re.DOTALL | re.MULTILINE)
    assert match, f"{path.name} has no section '{hashes} {title}'"
    return match.group(1)


def _table_first_column(section: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\| `([^`]+)`", section, flags=re.MULTILINE)]


def _commands() -> dict[str, Any]:
    return dict(app.commands)


def _root_options() -> set[str]:
    root = app
    return {opt for param in root.params for opt in (*param.opts, *param.secondary_opts)} | {"-h", "--help"}


def _own_options(command: Any) -> set[str]:
    """A command's options, without the global options every command accepts and without -h/--help."""
    return {opt for param in command.params if param.expose_value and param.opts[0].startswith("-")
            for opt in param.opts if opt.startswith("--")}


def _all_options(command: Any) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)} | _root_options()


# --- the README ------------------------------------------------------------------------------------------

def test_quick_start_has_exactly_two_commands_the_second_runs_the_tests() -> None:
    blocks = re.findall(r"```sh\n(.*?)\n```", _section(README, "Quick start"), flags=re.DOTALL)
    assert len(blocks) == 2
    assert all("\n" not in block for block in blocks)
    assert " ask " in blocks[0] and "--server fake" in blocks[0] and "fixtures/vault" in blocks[0]
    assert "pip install" in blocks[1] and "[test]" in blocks[1] and "pytest" in blocks[1]


def test_ci_runs_the_readmes_install_and_quick_start_blocks_the_test_command_last() -> None:
    script = _text(ROOT / ".ci" / "run")
    extract = re.search(r"\nblocks=\(\)\n.*?\ndone < README.md\n", script, flags=re.DOTALL)
    assert extract
    shown = extract.group() + 'printf "%s\\0" "${blocks[@]}"'
    out = subprocess.run(["bash", "-c", shown], cwd=ROOT, capture_output=True, text=True, check=True)
    found = [block.rstrip("\n") for block in out.stdout.split("\0")[:-1]]
    readme = [block for section in ("Install", "Quick start")
              for block in re.findall(r"```sh\n(.*?)\n```", _section(README, section), flags=re.DOTALL)]
    assert found == readme and "pytest" in found[-1]
    assert "test_command=${blocks[-1]" in script


def test_the_real_notebook_steps_find_their_commands_once_installed(tmp_path: Path) -> None:
    """The *With a real notebook* commands run as copied after *Install*: its lines beyond making the virtual
    environment put `nlmsync` and `nlm` (the login) on PATH — here in a clone whose `.venv` is this one."""
    install = re.findall(r"```sh\n(.*?)\n```", _section(README, "Install"), flags=re.DOTALL)[0].splitlines()
    steps = re.findall(r"```sh\n(.*?)\n```", _section(README, "With a real notebook"), flags=re.DOTALL)[0]
    commands = sorted({line.split()[0] for line in steps.splitlines() if line.strip()})
    assert commands == ["nlm", "nlmsync"]
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / ".venv").symlink_to(Path(sys.executable).parent.parent)
    setup = [line for line in install if "python3 -m venv" not in line]
    assert setup, "the Install step does not put .venv/bin on PATH"
    found = subprocess.run(["bash", "-c", "\n".join([*setup, *(f"command -v {c}" for c in commands)])], cwd=clone,
                           env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, capture_output=True, text=True,
                           check=False)
    assert found.stdout.splitlines() == [str(clone / ".venv" / "bin" / c) for c in commands], found.stderr


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_page_needs_nothing_a_clone_lacks(page: Path) -> None:
    """A reader has the repository only: no page sends them beside it, nor cites sections of a document it does
    not hold."""
    text = _text(page)
    assert "../shared" not in text and "seeds/" not in text, page.name
    assert "§" not in text, page.name


def test_the_internals_page_says_it_is_for_contributors() -> None:
    opening = _text(DOCS / "internals.md").split("\n\n", 2)[1]
    assert "for contributors" in opening


def test_the_benchmarks_corpora_are_built_by_a_script_of_the_repository() -> None:
    section = _section(DOCS / "benchmarks.md", "The corpora")
    assert "python benchmarks/corpora.py" in section and (ROOT / "benchmarks" / "corpora.py").is_file()
    for repository in ("tldr-pages/tldr", "obsidianmd/obsidian-help", "noramtboraas/information-retrieval"):
        assert f"https://github.com/{repository}" in section


def test_the_readme_is_one_page() -> None:
    assert len(_text(README).splitlines()) <= README_MAX_LINES


# --- commands and options --------------------------------------------------------------------------------

def test_every_command_is_in_the_command_table_and_every_listed_command_exists() -> None:
    documented = {name.split()[0] for name in _table_first_column(_section(DOCS / "commands.md", "Commands"))}
    assert documented == set(_commands())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_option_of_every_command_is_documented_in_its_section(name: str) -> None:
    section = _section(DOCS / "commands.md", f"`{name}`")
    missing = {opt for opt in _own_options(_commands()[name]) if f"`{opt}" not in section}
    assert not missing, f"docs/commands.md, section `{name}`, does not mention {sorted(missing)}"


def test_every_global_option_is_documented() -> None:
    table = _section(DOCS / "commands.md", "Global options")
    missing = {opt for opt in _root_options() if opt not in table}
    assert not missing


def _command_lines() -> list[tuple[str, str]]:
    """Every `nlmsync …` command line in a code block or a code span of the README and docs."""
    found = []
    for page in PAGES:
        text = _text(page)
        for block in re.findall(r"```(?:sh|yaml)\n(.*?)```", text, flags=re.DOTALL):
            for line in block.splitlines():
                line = line.split("run: ", 1)[-1].strip()
                if re.match(r"(\S*/)?nlmsync ", line):
                    found.append((page.name, re.split(r"\s+#\s", line)[0].split(" > ")[0]))
        for span in re.findall(r"`(nlmsync [^`]+)`", text):
            found.append((page.name, span))
    return found


def test_every_command_line_in_the_docs_uses_a_command_and_options_that_exist() -> None:
    commands = _commands()
    lines = _command_lines()
    assert len(lines) > 40
    wrong = []
    for page, line in lines:
        words = shlex.split(line.replace("…", "X").replace('"$(', "").replace(')"', ""))[1:]
        name, index = None, 0
        while index < len(words):
            word = words[index]
            if word in ("--vault", "--config", "--state", "--server", "--notebook"):
                index += 2
                continue
            if not word.startswith("-"):
                name = word
            break
        if name is None or not re.fullmatch(r"[a-z-]+", name):
            continue  # a placeholder: `nlmsync COMMAND -h`, `nlmsync --server URL …`
        if name not in commands:
            wrong.append(f"{page}: {line}: no command '{name}'")
            continue
        known = _all_options(commands[name])
        for word in words:
            option = word.split("=", 1)[0]
            if option.startswith("-") and option not in known:
                wrong.append(f"{page}: {line}: `{name}` has no option {option}")
    assert not wrong, "\n".join(wrong)


# --- settings --------------------------------------------------------------------------------------------

def _settings_rows() -> dict[str, list[str]]:
    section = _section(DOCS / "configuration.md", "Settings")
    return {m.group(1): [cell.strip() for cell in m.group(2).split("|")]
            for m in re.finditer(r"^\| `(\w+)` \| (.*) \|$", section, flags=re.MULTILINE)}


def test_every_setting_is_documented_with_its_default() -> None:
    rows = _settings_rows()
    assert set(rows) == set(Settings.model_fields)
    for key, field in Settings.model_fields.items():
        if field.default_factory is None and field.default is not None and key != "vault":
            assert rows[key][0] == str(field.default), key


def test_the_flag_of_each_setting_exists_and_no_flag_of_a_setting_goes_undocumented() -> None:
    """A setting's *flag* cell names a command's option (`refresh --capacity`) or a global one (`--server`);
    a command option named after a setting is in that setting's row."""
    commands = _commands()
    rows = _settings_rows()
    for key, cells in rows.items():
        flag = cells[1].strip("`")
        if not flag:
            continue
        *command, option = flag.split()
        known = _all_options(commands[command[0]]) if command else _root_options()
        assert option in known, f"setting {key}: documented flag '{flag}' does not exist"
    for name, command in commands.items():
        for option in _own_options(command) | _root_options():
            key = option.removeprefix("--").replace("-", "_")
            if key in rows and name != "fake-server":
                assert option in rows[key][1], f"setting {key}: its flag {option} ({name}) is not documented"


# --- exit codes, JSON output, CI ---------------------------------------------------------------------------

def test_exit_code_table_matches_the_error_module() -> None:
    documented = {int(code) for code in re.findall(r"^\| (\d) \|", _text(DOCS / "exit-codes.md"), flags=re.MULTILINE)}
    defined = {value for name, value in vars(errors).items() if name.startswith("EXIT_")}
    assert documented == defined


def test_every_command_with_json_output_has_its_document_described() -> None:
    with_json = {name for name, command in _commands().items()
                 if any("--json" in param.opts for param in command.params)}
    documented = {name.split()[0] for name in _table_first_column(_text(DOCS / "json-output.md"))}
    assert documented == with_json


def test_the_ci_example_runs_against_the_fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Every `nlmsync` step of the GitHub Actions job in docs/ci.md, run as written on a copy of the fixture vault."""
    yaml = re.search(r"```yaml\n(.*?)\n```", _text(DOCS / "ci.md"), flags=re.DOTALL)
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
        assert json.loads(out)["schema_version"] == 1, step
    # the fault step's fault did happen: its second upload was applied and its answer lost, and still every note
    # went up once
    from nlmsync.fake import FakeNotebookLM

    fault = FakeNotebookLM(state_path=tmp_path / "faults.json")
    assert [(c.tool, c.dropped) for c in fault.calls if c.dropped] == [("source_add", "after")]
    (notebook,) = fault.notebooks.values()
    titles = [source.title for source in notebook.sources.values()]
    added = [n for n in json.loads(out)["notes"] if n["branch"] == "added"]
    assert len(titles) == len(set(titles)) == len(added) and any(n["adopted"] for n in added)


@pytest.mark.slow  # a pytest run in a child process
def test_the_pytest_plugin_example_passes_as_written(tmp_path: Path) -> None:
    """The test docs/ci.md shows, run by pytest as a user would, on a copy of the fixture vault."""
    import sys

    code = re.search(r"```python\n(.*?)\n```", _section(DOCS / "ci.md", "The pytest plugin"), flags=re.DOTALL)
    assert code and "returncode ==" in code.group(1)
    shutil.copytree(ROOT / "fixtures" / "vault", tmp_path / "notes", ignore=shutil.ignore_patterns(".nlmsync"))
    (tmp_path / "test_example.py").write_text(code.group(1) + "\n", encoding="utf-8")
    env = {name: value for name, value in os.environ.items() if not name.startswith("NLMSYNC_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `nlmsync` beside this Python
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


# --- links -----------------------------------------------------------------------------------------------

def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    kept = "".join(ch for ch in text if ch in " -_" or unicodedata.category(ch)[0] in "LN")
    return kept.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", _text(path), flags=re.DOTALL)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, flags=re.MULTILINE)}


def _links() -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for page in PAGES:
        text = re.sub(r"```.*?```", "", _text(page), flags=re.DOTALL)
        found.extend((page, target) for target in re.findall(r"\]\(([^)\s]+)\)", text))
    return found


def test_every_link_of_the_readme_and_docs_resolves_to_a_file_and_heading() -> None:
    links = _links()
    assert any(page == README and target.startswith("docs/") for page, target in links)
    broken = []
    for page, target in links:
        if re.match(r"[a-z]+:", target):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.is_file():
            broken.append(f"{page.name}: {target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{page.name}: {target}: no such heading")
    assert not broken, "\n".join(broken)


def test_every_page_of_the_docs_is_linked_from_the_readme() -> None:
    linked = {(README.parent / target.partition("#")[0]).resolve() for page, target in _links()
              if page == README and not re.match(r"[a-z]+:", target)}
    assert set(DOCS.glob("*.md")) <= linked


def test_the_docs_name_behaviours_not_sections_of_documents_the_repository_does_not_hold() -> None:
    cited = [f"{page.relative_to(ROOT)}:{number}" for page in PAGES
             for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1) if "§" in line]
    assert cited == []
