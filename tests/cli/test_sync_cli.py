"""The sync commands through `nlmsync.cli.main` in-process (the fake server still runs as a subprocess):
what a script sees on stdout, stderr and in the exit code when a run stops part-way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import environment_without_settings
from tests.cli_helpers import run_cli as run

from nlmsync.store import StateStore


def test_capacity_reached_mid_run_prints_what_was_done_then_exits_3(tmp_path: Path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("a", encoding="utf-8")
    (vault / "b.md").write_text("b", encoding="utf-8")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Cap"]
    code, _, err = run(capsys, *common, "refresh", "--capacity", "2", "--json", "a.md", "b.md")
    assert (code, err) == (0, "")  # not a terminal: no progress display either
    (vault / "b.md").write_text("b2", encoding="utf-8")  # replacing b adds first: it needs a third slot
    (vault / "c.md").write_text("c", encoding="utf-8")

    code, out, err = run(capsys, *common, "refresh", "--capacity", "2", "--json", "c.md", "b.md")
    assert code == 3
    report = json.loads(out)  # exactly one JSON document: what was done and recorded before stopping
    assert [(n["path"], n["branch"]) for n in report["notes"]] == [("a.md", "evicted"), ("c.md", "added")]
    assert err.splitlines()[0].startswith("nlmsync: error: notebook") and "capacity 2" in err
    assert "Traceback" not in err

    with StateStore.open(vault / ".nlmsync" / "state.db") as store:  # and it was recorded
        nb = report["notebook_id"]
        assert sorted(m.path for m in store.all_mappings(nb)) == ["b.md", "c.md"]
        assert [e.path for e in store.recent_evictions(nb, 5)] == ["a.md"]


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_progress_display_only_on_a_terminal(vault: Path):
    """On a terminal (stderr a pty) refresh and ask show rich progress on stderr; stdout keeps the results."""
    import os
    import pty
    import subprocess
    import sys

    primary, secondary = pty.openpty()
    env = environment_without_settings()
    with subprocess.Popen([sys.executable, "-m", "nlmsync", "--vault", str(vault), "--server", "fake", "--notebook",
                           "new:Tty", "ask", "How does heapsort work?"], stdout=subprocess.PIPE, stderr=secondary,
                          env=env) as proc:
        os.close(secondary)
        chunks = []
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the pty closes when the process exits
                break
            if not chunk:
                break
            chunks.append(chunk)
        assert proc.stdout is not None
        out = proc.stdout.read().decode()
    os.close(primary)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0, err
    assert "\x1b[?25l" in err  # a live display took the terminal (earlier phases may finish between refreshes;
    assert "asking NotebookLM (" in err  # the last one is always drawn when the display stops)
    assert "Sources:" in out and "\x1b[" not in out  # the answer itself is plain text on a pipe


@pytest.mark.slow  # waits out the connection retries' real backoff
def test_server_down_is_one_line_exit_4_and_the_state_is_kept(tmp_path: Path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("a", encoding="utf-8")
    state = vault / ".nlmsync" / "state.db"
    with StateStore.open(state) as store:
        store.upsert_mapping(notebook_id="nb", path="a.md", part=0, part_count=1, source_id="s1",
                             content_hash="h", title="a.md · 00000000", status="active", managed=True)
        store.queue_deletion("nb", "s0", "replaced earlier")
    code, out, err = run(capsys, "--vault", str(vault), "--server", "http://127.0.0.1:9/mcp", "--notebook", "nb",
                         "refresh", "--json", "a.md")
    assert code == 4 and json.loads(out)["notes"] == []  # the report of what was done: nothing
    assert err.startswith("nlmsync: error: cannot connect to http://127.0.0.1:9/mcp") and "Traceback" not in err
    with StateStore.open(state) as store:
        assert [m.source_id for m in store.mappings_by_path("nb", "a.md")] == ["s1"]
        assert [p.source_id for p in store.pending_deletions("nb")] == ["s0"]


def test_refresh_all_skips_a_name_that_is_not_utf8_and_escapes_control_characters(tmp_path: Path, capsys):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "good.md").write_text("good", encoding="utf-8")
    (vault / "latin1-\udce9.md").write_text("latin", encoding="utf-8")  # the name's byte 0xE9 on disk
    (vault / "evil\x1b[2J\nname.md").write_text("evil", encoding="utf-8")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Odd names"]
    code, out, err = run(capsys, *common, "refresh", "--all")
    assert (code, err) == (0, "")
    assert "\x1b" not in out
    assert "added     evil\\x1b[2J\\nname.md" in out and "added     good.md" in out
    assert "excluded  latin1-\\xe9.md — invalid file name encoding" in out  # not uploaded, and said why
    code, _, err = run(capsys, *common, "refresh", "missing\x1b[2J\nnote.md")
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err
    assert err.startswith("nlmsync: error: missing\\x1b[2J\\nnote.md")


def test_refresh_says_why_a_note_is_skipped_once_in_the_words_of_index(vault: Path, capsys) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Skips", "refresh", "--all")
    lines = set(out.splitlines())
    assert code == 0
    assert {"excluded  private/diary-secret.md (nlmsync: false)", "excluded  quirks/binary-image.md — binary",
            "excluded  quirks/latin1.md — invalid utf-8 (byte 5)", "excluded  quirks/whitespace-only.md — empty",
            "excluded  quirks/empty.md — empty"} <= lines


def test_reconcile_prints_its_counts_and_each_stale_path_unless_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    from nlmsync.app.results import ReconcileReport
    from nlmsync.cli.sync_cmds import _print_reconcile

    report = ReconcileReport(notebook_id="nb", active_count=3, stale_paths=["gone [x].md", "b.md"],
                             canonicalized_paths=["c.md"], orphan_source_ids=["o1", "o2"])
    summary = "Notebook nb: 3 active, 2 stale, 1 canonicalized, 2 orphans."
    capsys.readouterr()
    _print_reconcile(report, json_output=False, quiet=False)
    assert capsys.readouterr().out.splitlines() == [summary, "  stale gone [x].md", "  stale b.md"]
    _print_reconcile(report, json_output=False, quiet=True)
    assert capsys.readouterr().out.splitlines() == [summary]
    _print_reconcile(report, json_output=True, quiet=False)
    document = json.loads(capsys.readouterr().out)
    assert document["stale_paths"] == ["gone [x].md", "b.md"] and document["orphan_source_ids"] == ["o1", "o2"]


def test_every_line_of_an_answer_reads_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    """The readable answer with each kind of citation — a note with its heading, an attachment's page, a pack
    whose quote no note holds now, a source unknown to the vault — and the conversation's line, markup printed as
    written."""
    from nlmsync.app import AskResult, Citation
    from nlmsync.cli.sync_cmds import _print_ask

    result = AskResult(
        notebook_id="nb", question="q", answer="Heapsort [1] sorts in place [2].", conversation_id="c1",
        continued=True, source_ids=["s1", "s2", "s3"], carried_over_source_ids=["s3"], notices=["a [x] notice"],
        citations=[Citation(number=1, source_id="s1", path="sorting/heap [x].md", heading="Heapsort › Cost"),
                   Citation(number=2, source_id="s2", path="papers/heaps.pdf", page=3),
                   Citation(number=3, source_id="s3", pack="nlmsync pack 1"),
                   Citation(number=4, source_id="s4")])
    capsys.readouterr()
    _print_ask(result, json_output=False)
    out, err = capsys.readouterr()
    assert err == "nlmsync: note: a [x] notice\n"
    assert out.splitlines() == [
        "Heapsort [1] sorts in place [2].", "", "Sources:",
        "  [1] sorting/heap [x].md › Heapsort › Cost",
        "  [2] papers/heaps.pdf, page 3",
        "  [3] pack nlmsync pack 1 (the quote is in none of its notes as they are now)",
        "  [4] source s4",
        "", "followed up in conversation c1 · 3 sources (1 carried over)",
    ]
