"""A search given in its plain forms runs without typer (`cli/_plain_search.py`), and prints, and exits, exactly
as the typer command does; any other form is typer's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run

import nlmsync.cli as cli_module
from nlmsync.cli._plain_search import plain_search


def both_ways(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
              *args: str) -> tuple[tuple[int, str, str], tuple[int, str, str]]:
    """(exit code, stdout, stderr) of `nlmsync ARGS…` through the plain path, then through typer."""
    assert plain_search(list(args)) is not None, args
    plain = run(capsys, *args)
    with monkeypatch.context() as patched:
        patched.setattr(cli_module, "plain_search", lambda words: None)
        through_typer = run(capsys, *args)
    return plain, through_typer


def forms(vault: Path, state: Path) -> list[list[str]]:
    v, s = str(vault), str(state)
    return [
        ["--vault", v, "search", "How does heapsort work?", "--json"],
        ["--vault", v, "--state", s, "search", "heap sort", "--json", "--limit", "3"],
        ["search", "김치찌개", "--vault", v, "--json"],  # global options after the command
        ["-q", "--vault", v, "search", "--limit", "2", "sourdough", "--state", s],  # text output
        ["--vault", v, "search", "--json", "zzzz-no-such-term"],  # no hit
        ["--vault", v, "search", "   ", "--json"],  # an empty query: a usage error
        ["--vault", v + "/no-such-folder", "search", "heap", "--json"],  # no vault: an input error
        ["--vault", v, "--config", v + "/missing.toml", "search", "heap", "--json"],  # a config file not found
        ["--vault", v, "--server", "fake", "--notebook", "nb", "search", "heap", "--json"],
    ]


def test_every_plain_form_prints_and_exits_as_typer_does(vault: Path, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for args in forms(vault, tmp_path / "state.db"):
        plain, through_typer = both_ways(capsys, monkeypatch, *args)
        assert plain == through_typer, args
    # and they did search: the first form's answer, the empty query's and the missing vault's errors
    assert '"algorithms/sorting/heapsort.md"' in both_ways(capsys, monkeypatch, *forms(vault, tmp_path)[0])[0][1]
    code, _out, err = both_ways(capsys, monkeypatch, *forms(vault, tmp_path / "s.db")[5])[0]
    assert code == 2 and "the query is empty" in err


def test_a_plain_search_on_a_changed_vault_reads_the_change(vault: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["--vault", str(vault), "search", "tapir", "--json"]
    run(capsys, *args)  # the index, saved
    (vault / "tapir.md").write_text("A tapir.", encoding="utf-8")
    plain, through_typer = both_ways(capsys, monkeypatch, *args)
    assert plain == through_typer and '"tapir.md"' in plain[1]


@pytest.mark.parametrize("args", [
    ["search", "--queries", "q.txt"],  # not a plain form: typer parses it
    ["search", "heap", "--limit=3"],
    ["--vault=v", "search", "heap"],
    ["search", "heap", "--limit", "0"],
    ["search", "heap", "--limit", "-1"],
    ["search", "heap", "--limit", "٣"],
    ["search", "heap", "--limit"],
    ["search", "-h"],
    ["search", "--help"],
    ["--version"],
    ["search", "heap", "sort"],  # a second QUERY
    ["search", "--", "-heap"],
    ["search", "heap", "--json", "--json"],
    ["--vault", "a", "search", "heap", "--vault", "b"],  # given twice: typer's rule (the later one wins)
    ["-q", "search", "heap", "--quiet"],
    ["--vault", "--state", "search", "heap"],  # a value that looks like an option
    ["search"],
    ["index"],
    ["ask", "heap"],
    ["heap", "search"],
    [],
])
def test_other_forms_are_left_to_typer(args: list[str]) -> None:
    assert plain_search(args) is None


def test_a_plain_form_is_recognized_with_its_options() -> None:
    found = plain_search(["-q", "search", "--vault", "v", "heap sort", "--limit", "7", "--state", "s.db", "--json"])
    assert found is not None
    assert (found.query, found.limit, found.json_output) == ("heap sort", 7, True)
    assert (found.cli.vault, found.cli.quiet, found.cli.global_overrides["state"]) == (Path("v"), True, Path("s.db"))


def test_typer_still_parses_what_the_plain_path_leaves(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "search", "heapsort", "--limit=1", "--json")
    assert code == 0 and out.count('"path"') == 1
    code, _out, err = run(capsys, "--vault", str(vault), "search", "heapsort", "--limit", "0")
    assert code == 2 and "--limit" in err


def test_a_plain_search_imports_no_typer(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--vault", str(vault), "index", "--json")[0] == 0  # a state file needing no migration
    code = ("import sys\nfrom nlmsync.cli import main\n"
            f"main(['--vault', {str(vault)!r}, 'search', 'heapsort', '--json'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'typer', 'click'}), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert '"algorithms/sorting/heapsort.md"' in done.stdout
    assert done.stderr.strip() == "[]"
