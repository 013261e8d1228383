"""Feedback on long work: labelled progress lines with done/total and an ETA on a terminal, and `-q` for cron
(the summary line and errors only)."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console
from tests.cli_helpers import run_cli as run

from nlmsync.cli import _progress, _runs, searching

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Progress displays go to a fake terminal; returns what was drawn on it."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    monkeypatch.setattr(_progress, "stderr_console", lambda: console)
    monkeypatch.setattr(searching, "interactive", lambda: True)
    monkeypatch.setattr(_runs, "interactive", lambda: True)
    return screen


def frames(screen: io.StringIO) -> list[str]:
    """The lines drawn on the terminal, escape sequences removed, blank ones dropped."""
    text = ANSI.sub("", screen.getvalue())
    return [line.strip() for line in re.split(r"[\r\n]", text) if line.strip()]


def test_counts_column_shows_done_total_and_an_eta() -> None:
    now = [0.0]
    progress = _progress.new_progress(get_time=lambda: now[0])
    task = progress.add_task("reading notes", total=100)
    column = _progress.CountsColumn()
    assert column.render(progress.tasks[0]).plain == "0/100"
    progress.update(task, completed=10)
    now[0] = 10.0
    progress.update(task, completed=30)  # 20 notes in 10 s: 70 left take 35 s
    assert column.render(progress.tasks[0]).plain == "30/100 · ETA 0:35"
    unknown = progress.add_task("connecting", total=None)
    assert column.render(progress.tasks[unknown]).plain == ""
    assert _progress.duration(3725) == "1:02:05"


def test_index_on_a_terminal_shows_each_phase_with_counts(vault: Path, terminal: io.StringIO,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "index")
    assert code == 0 and out.startswith("Indexed 26 notes")
    drawn = frames(terminal)
    assert "indexing: scanning the vault" in drawn[0]
    assert any(re.search(r"indexing: reading notes .* 0/30$", line) for line in drawn)
    assert "indexing: saving the index" in drawn[-1]


def test_status_on_a_terminal_says_what_it_waits_for(vault: Path, terminal: io.StringIO,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Labels"]
    assert run(capsys, *common, "refresh", "--json", "cooking/")[0] == 0
    terminal.truncate(0)
    code, out, _ = run(capsys, *common, "status")
    assert code == 0 and "sources" in out
    drawn = frames(terminal)
    assert drawn, "nothing was drawn"
    assert all(re.search(r"status: (connecting to the NotebookLM server|reading the notebook)…", line)
               for line in drawn), drawn


def test_quiet_refresh_prints_the_summary_only(vault: Path, capsys: pytest.CaptureFixture[str],
                                               terminal: io.StringIO) -> None:
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Quiet"]
    code, out, err = run(capsys, *common, "refresh", "-q", "cooking/")
    assert (code, err) == (0, "")
    assert len(out.splitlines()) == 1 and out.startswith("4 added. Notebook ")  # no line per note
    assert terminal.getvalue() == ""  # no progress display either
    code, out, _ = run(capsys, *common, "-q", "reconcile")  # before the command or after it
    assert code == 0 and len(out.splitlines()) == 1


def test_quiet_index_counts_the_skipped_notes_without_listing_them(vault: Path, terminal: io.StringIO,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "index", "-q")
    assert code == 0
    assert out.splitlines() == [out.splitlines()[0], "Skipped 5 (run without -q to list them)."]
    assert terminal.getvalue() == ""


def test_search_footer_counts_selected_and_shown_apart(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "search", "heapsort sorting", "--limit", "1", "--json")
    selected = json.loads(out)["selected_count"]
    assert code == 0 and selected > 1
    code, out, _ = run(capsys, "--vault", str(vault), "search", "heapsort sorting", "--limit", "1")
    assert out.splitlines()[-1] == f"✓ = selected for NotebookLM: {selected} selected, 1 shown"


def test_ask_on_a_fresh_vault_shows_the_index_being_built(vault: Path, terminal: io.StringIO,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Fresh", "ask",
                       "How does heapsort work?")
    assert code == 0 and "heapsort" in out.lower()
    drawn = frames(terminal)
    assert any(re.search(r"ask: indexing the vault .* 0/30$", line) for line in drawn), drawn
    assert any("preparing sources" in line for line in drawn)


def test_refresh_all_on_a_terminal_counts_the_notes_it_reads(vault: Path, terminal: io.StringIO,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    for i in range(200):
        (vault / "many" / f"n{i:03}.md").parent.mkdir(exist_ok=True)
        (vault / "many" / f"n{i:03}.md").write_text(f"# Note {i}\n\nThe body of note {i}.\n", encoding="utf-8")
    code, _out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Reading", "refresh",
                          "--all")
    assert code == 0, err
    drawn = frames(terminal)
    read = [int(m.group(1)) for line in drawn if (m := re.search(r"refresh: reading the notes .* (\d+)/2\d\d", line))]
    assert read and read[0] == 0 and max(read) > 100 and read == sorted(read), drawn  # it moves while reading
    after = drawn[max(i for i, line in enumerate(drawn) if "reading the notes" in line) + 1:]
    assert after and all("reading the notes" not in line for line in after)  # then the run's own phase again


def test_the_bar_counts_the_notes_done_not_the_paths_evicted_or_removed() -> None:
    """Evictions and removals are reported beside the notes they make room for: they do not move the bar, which
    counts the notes of the plan; the line beside it names each path as it is done, with its branch."""
    from nlmsync.sync import Branch, NoteOutcome

    progress = _runs.RichProgress("refresh")
    progress.start("refresh: uploading", 3)
    for path, branch in [("a.md", Branch.ADDED), ("old.md", Branch.EVICTED), ("c.md", Branch.ADDED),
                         ("gone.md", Branch.REMOVED), ("b [x].md", Branch.REPLACED)]:
        progress.advance(NoteOutcome(path=path, branch=branch))
    task = progress._progress.tasks[-1]
    assert task.completed == 3
    assert task.description == f"{Branch.REPLACED.value} b \\[x].md"  # the path escaped: rich markup is not read


def _hit(path: str, selected: bool, snippet: str = "") -> dict[str, object]:
    return {"path": path, "selected": selected, "matched_terms": ["heap"], "score": 1.5, "snippet": snippet}


def test_search_marks_the_selected_notes_and_indents_each_snippet_under_its_path(
        capsys: pytest.CaptureFixture[str]) -> None:
    hits = [_hit(f"n{i}.md", i < 2, "sift  down\nthe heap" if i == 9 else "") for i in range(10)]
    searching._print_results({"query": "heap", "results": hits, "weak_match": False, "selected_count": 2})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == " 1. ✓ n0.md  1.500  heap" and lines[2] == " 3.   n2.md  1.500  heap"
    assert lines[9:11] == ["10.   n9.md  1.500  heap", "     sift down the heap"]  # under the path, one line
    assert lines[-1] == "✓ = selected for NotebookLM: 2 selected, 10 shown"


def test_search_with_a_weak_match_names_the_query_and_selects_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    searching._print_results({"query": "zebra [x]", "results": [_hit("n.md", False)], "weak_match": True,
                              "selected_count": 0})
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["1.   n.md  1.500  heap",
                     "Nothing in the vault matches 'zebra [x]' well: nothing is selected (ask sends the question to "
                     "the notebook as it is)."]


def test_the_progress_display_leaves_the_terminal_as_it_found_it() -> None:
    progress = _progress.new_progress()
    assert progress.live.transient  # the bars are erased when the work ends: only the summary stays
    task = progress.add_task("reading notes", total=10)
    assert _progress.CountsColumn().render(progress.tasks[task]).style == "progress.percentage"


def test_an_allowance_window_whose_share_left_is_not_reported_says_so() -> None:
    from nlmsync.cli._allowance import _window
    from nlmsync.notebooklm.models import UsageWindow

    assert _window(UsageWindow(window="weekly")) == "weekly share left not reported"
    assert _window(UsageWindow(window="weekly", percent_used=25)) == "weekly 75% left"


def test_an_allowance_the_server_reports_without_windows_says_so() -> None:
    from nlmsync.cli._allowance import allowance_line
    from nlmsync.notebooklm.models import Usage

    assert allowance_line(Usage(windows=[], tier=None)) == "no window reported"
    assert allowance_line(None) == "not reported by this server"
