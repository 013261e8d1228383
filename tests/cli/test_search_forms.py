"""The ways a search may be written on the command line — global options before or after the command, an
option's value as the next word or after `=`, `--` before a query that starts with `-`, an option given twice —
each answer as the plain spelling does; and a search imports neither pydantic nor a second parser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


def spellings(vault: Path, state: Path) -> list[tuple[list[str], list[str]]]:
    """(a plain spelling, another spelling of the same search)."""
    v, s = str(vault), str(state)
    return [
        (["--vault", v, "search", "How does heapsort work?", "--json"],
         ["search", "How does heapsort work?", "--json", "--vault", v]),
        (["--vault", v, "--state", s, "search", "heap sort", "--json", "--limit", "3"],
         ["--vault=" + v, "search", "--limit=3", "--json", "heap sort", "--state", s]),
        (["-q", "--vault", v, "search", "--limit", "2", "sourdough", "--state", s],  # text output
         ["search", "sourdough", "--quiet", "--limit", "2", "--vault", v, "--state", s]),
        (["--vault", v, "search", "--json", "zzzz-no-such-term"],  # no hit
         ["--vault", v, "search", "--json", "--", "zzzz-no-such-term"]),
        (["--vault", v, "search", "heap", "--json", "--limit", "1"],  # given twice: the later one wins
         ["--vault", v + "/no-such-folder", "search", "heap", "--json", "--limit", "5", "--limit", "1", "--vault", v]),
        (["--vault", v, "search", "   ", "--json"],  # an empty query: a usage error
         ["search", "   ", "--vault", v, "--json"]),
        (["--vault", v + "/no-such-folder", "search", "heap", "--json"],  # no vault: an input error
         ["search", "heap", "--json", "--vault", v + "/no-such-folder"]),
        (["--vault", v, "--config", v + "/missing.toml", "search", "heap", "--json"],  # a config file not found
         ["search", "heap", "--config", v + "/missing.toml", "--json", "--vault", v]),
    ]


def test_every_spelling_of_a_search_answers_as_the_plain_one(vault: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    for plain, other in spellings(vault, tmp_path / "state.db"):
        assert run(capsys, *plain) == run(capsys, *other), other
    # and they did search: the first spelling's answer, the empty query's and the missing vault's errors
    first, _other = spellings(vault, tmp_path / "state.db")[0]
    assert '"algorithms/sorting/heapsort.md"' in run(capsys, *first)[1]
    code, _out, err = run(capsys, *spellings(vault, tmp_path / "state.db")[5][0])
    assert code == 2 and "the query is empty" in err
    code, _out, err = run(capsys, *spellings(vault, tmp_path / "state.db")[6][0])
    assert code == 2 and "no-such-folder" in err


def test_a_query_starting_with_a_dash_follows_two_dashes(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "search", "--json", "--", "-heapsort")
    assert code == 0 and '"algorithms/sorting/heapsort.md"' in out
    code, _out, err = run(capsys, "--vault", str(vault), "search", "--json", "-heapsort")
    assert code == 2 and "no such option" in err


def test_a_search_on_a_changed_vault_reads_the_change(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--vault", str(vault), "search", "tapir", "--json"]
    run(capsys, *args)  # the index, saved
    (vault / "tapir.md").write_text("A tapir.", encoding="utf-8")
    code, out, _ = run(capsys, *args)
    assert code == 0 and '"tapir.md"' in out


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_a_search_imports_no_pydantic_and_no_typer(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--vault", str(vault), "index", "--json")[0] == 0  # a state file needing no migration
    code = ("import sys\nfrom nlmsync.cli import main\n"
            f"main(['--vault', {str(vault)!r}, 'search', 'heapsort', '--json', '--limit=3'])\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'pydantic', 'click'}), file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert '"algorithms/sorting/heapsort.md"' in done.stdout
    assert done.stderr.strip() == "['click']"


def test_search_needs_a_query_or_a_queries_file_and_says_so(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "search")
    assert (code, out) == (2, "") and err.startswith("nlmsync: error: give either a QUERY or --queries FILE")


def test_search_results_carry_a_snippet_of_the_length_set(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / ".nlmsync").mkdir(exist_ok=True)
    (vault / ".nlmsync" / "config.toml").write_text("snippet_length = 40\n", encoding="utf-8")
    code, out, _ = run(capsys, "--vault", str(vault), "search", "heapsort", "--json")
    results = json.loads(out)["results"]
    assert code == 0 and results and all(0 < len(hit["snippet"]) <= 40 for hit in results)
    assert "heap" in results[0]["snippet"].lower()
