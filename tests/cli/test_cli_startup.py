"""What a fresh `nlmsync` process imports: each command loads what it needs when it runs, so `search`,
`index` and `--help` never pay for the MCP SDK, the fake server, the sync service or the async stack, nor
for registering the other commands; and how a search run as a program ends: at once, its output whole."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a process boundary: every test runs nlmsync in a new interpreter

# Run `main(argv)` in a new interpreter and write down the modules it imported beyond click's own.
_PROBE = """
import json, sys
import click
before = set(sys.modules)
from nlmsync.cli import main
try:
    main(sys.argv[2:])
    code = 0
except SystemExit as exc:
    code = exc.code or 0
with open(sys.argv[1], "w", encoding="utf-8") as report:
    json.dump({"code": code, "imported": sorted(set(sys.modules) - before)}, report)
"""

# The notebook side of nlmsync: only the commands that talk to a notebook or serve MCP load these.
NOTEBOOK_SIDE = ("mcp", "anyio", "httpx", "uvicorn", "starlette", "watchfiles", "nlmsync.notebooklm",
                 "nlmsync.app", "nlmsync.sync", "nlmsync.server", "nlmsync.watch")
# The modules registering commands other than `index` and `search`.
OTHER_COMMANDS = tuple(f"nlmsync.cli.{module}" for module in ("completion_cmds", "fake_cmds", "notebook_cmds",
                                                                 "server_cmds", "sync_cmds", "watch_cmds"))
# What --help needs none of: the index (numpy), the settings (pydantic), the state file, rich.
INDEX_SIDE = ("numpy", "pydantic", "rich", "regex", "sqlite3", "nlmsync.config", "nlmsync.search",
              "nlmsync.store", "nlmsync.vault")


def _run_probe(tmp_path: Path, *argv: str) -> tuple[int, str, str, set[str]]:
    """Exit code, stdout, stderr and the modules imported of `nlmsync ARGV…` in a new interpreter."""
    report = tmp_path / "imports.json"
    done = subprocess.run([sys.executable, "-c", _PROBE, str(report), *argv], capture_output=True, text=True,
                          timeout=120, check=False)
    assert report.exists(), done.stderr
    result = json.loads(report.read_text(encoding="utf-8"))
    return result["code"], done.stdout, done.stderr, set(result["imported"])


def _imports(tmp_path: Path, *argv: str) -> tuple[int, str, set[str]]:
    code, out, _err, imported = _run_probe(tmp_path, *argv)
    return code, out, imported


def _among(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in prefixes))


@pytest.mark.parametrize("json_flag", [False, True], ids=["text", "json"])
def test_search_imports_nothing_of_the_notebook_side(vault: Path, tmp_path: Path, json_flag: bool) -> None:
    code, out, imported = _imports(tmp_path, "--vault", str(vault), "search", "How does heapsort work?",
                                   *(["--json"] if json_flag else []))
    assert code == 0
    assert "algorithms/sorting/heapsort.md" in out  # it really searched
    assert "nlmsync.search.index" in imported
    assert _among(imported, NOTEBOOK_SIDE) == []
    assert _among(imported, OTHER_COMMANDS) == []  # click builds the search command alone
    if json_flag:
        assert _among(imported, ("rich",)) == []  # one JSON document needs no terminal rendering
    # nothing configures the settings: the settings model is not loaded, nor pydantic
    assert _among(imported, ("pydantic", "pydantic_core", "nlmsync.config.model")) == []


def test_search_of_an_unchanged_vault_imports_no_numpy(vault: Path, tmp_path: Path) -> None:
    """Once the index is saved, a search of the unchanged vault is answered cold (`search/cold.py`): the
    ranking's numpy and the whole index's modules are never loaded."""
    code, _out, _imported = _imports(tmp_path, "--vault", str(vault), "index", "--json")
    assert code == 0
    code, out, imported = _imports(tmp_path, "--vault", str(vault), "search", "How does heapsort work?", "--json")
    assert code == 0 and json.loads(out)["results"][0]["path"] == "algorithms/sorting/heapsort.md"
    assert _among(imported, ("numpy", "nlmsync.search.postings", "nlmsync.search.ranking")) == []


def test_search_given_values_to_convert_loads_no_pydantic(vault: Path, tmp_path: Path) -> None:
    code, out, imported = _imports(tmp_path, "--vault", str(vault), "search", "heapsort", "--limit=1", "--json",
                                   "--state", str(tmp_path / "state.db"))
    assert code == 0 and len(json.loads(out)["results"]) == 1
    assert _among(imported, ("pydantic", "pydantic_core")) == []  # click converts the values


def test_index_imports_nothing_of_the_notebook_side(vault: Path, tmp_path: Path) -> None:
    code, out, imported = _imports(tmp_path, "--vault", str(vault), "index", "--json")
    assert code == 0 and json.loads(out)["indexed_count"] > 0
    assert _among(imported, NOTEBOOK_SIDE) == []


def test_help_imports_neither_side(tmp_path: Path) -> None:
    code, out, imported = _imports(tmp_path, "--help")
    assert code == 0 and "search" in out and "fake-server" in out
    assert _among(imported, NOTEBOOK_SIDE + INDEX_SIDE) == []


# `python -m nlmsync ARGS` with an exit hook that says whether the interpreter's teardown ran.
_RUN_AS_PROGRAM = """
import atexit, runpy, sys
atexit.register(lambda: sys.stderr.write("torn down\\n"))
sys.argv = ["nlmsync", *sys.argv[1:]]
runpy.run_module("nlmsync", run_name="__main__")
"""


def _as_program(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _RUN_AS_PROGRAM, *argv], capture_output=True, text=True,
                          input=stdin, timeout=120, check=False)


def test_a_search_run_as_a_program_ends_at_once_with_its_output_whole_and_its_state_file_closed(
        vault: Path) -> None:
    # the first builds the index and writes it; the second's answer, echoing its query, outgrows a pipe's
    # buffer
    for query in ("heapsort", "heapsort" + " zzqx" * 20_000):
        done = _as_program("--vault", str(vault), "search", "--json", query)
        assert (done.returncode, done.stderr) == (0, "")  # the exit hook never ran: no teardown
        document = json.loads(done.stdout)
        assert document["query"] == query
        assert document["results"][0]["path"] == "algorithms/sorting/heapsort.md"
    # the state file was closed before the end: its write-ahead log checkpointed and gone
    assert sorted(p.name for p in (vault / ".nlmsync").iterdir()) == ["state.db"]
    done = _as_program("--vault", str(vault), "search", "heapsort")  # the text output too
    assert (done.returncode, done.stderr) == (0, "") and "heapsort.md" in done.stdout
    done = _as_program("--vault", str(vault), "search", "--queries", "-", stdin="heapsort\nsourdough\n")
    assert (done.returncode, done.stderr) == (0, "")
    assert [json.loads(line)["query"] for line in done.stdout.splitlines()] == ["heapsort", "sourdough"]


def test_a_failing_search_or_another_command_ends_as_before(vault: Path) -> None:
    done = _as_program("--vault", str(vault), "search", "--json", " ")
    assert done.returncode == 2 and done.stderr.endswith("torn down\n")
    done = _as_program("--vault", str(vault), "index", "--json")
    assert done.returncode == 0 and done.stderr == "torn down\n"
