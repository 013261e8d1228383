"""`nlmsync status` reads like `git status`: what changed in the vault since the last sync, what the notebook
lacks, what goes next, capacity as used/limit — each with the command that fixes it. In process."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from tests.cli_helpers import fake_state
from tests.cli_helpers import run_cli as run


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def synced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """A vault of five notes, all synced to a fake notebook; the common arguments."""
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    for name in ("a", "b", "c", "d", "e"):
        (vault / "notes" / f"{name}.md").write_text(f"# {name}\nNote {name} about topic {name}.\n", encoding="utf-8")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Status"]
    code, _, err = run(capsys, *common, "refresh", "--json", "notes")
    assert code == 0, err
    return common


def test_status_shows_local_changes_with_the_command_for_each(synced: list[str], tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "vault" / "notes"
    (notes / "a.md").write_text("# a\nEdited since the sync.\n", encoding="utf-8")
    (notes / "b.md").rename(notes / "b-moved.md")
    (notes / "c.md").unlink()

    code, out, err = run(capsys, *synced, "status", "--json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["schema_version"] == 1
    given = "nlmsync " + " ".join(synced)  # the commands carry the options this status was given
    assert [(c["path"], c["change"], c["renamed_to"], c["command"]) for c in report["local_changes"]] == [
        ("notes/a.md", "modified", None, f"{given} refresh notes/a.md"),
        ("notes/b.md", "renamed", "notes/b-moved.md", f"{given} refresh notes/b-moved.md"),
        ("notes/c.md", "deleted", None, f"{given} refresh --all")]
    assert report["source_count"] == 5 and report["capacity"] == 50 and len(report["active_sources"]) == 5
    assert [e["path"] for e in report["next_evictions"]][:1] == ["notes/a.md"]  # least recently used first
    assert [s["command"] for s in report["next_steps"]] == [
        f"{given} refresh notes/a.md notes/b-moved.md",
        f"{given} refresh --all (mirrors the vault: also uploads notes not synced yet)"]

    code, out, _ = run(capsys, *synced, "status")
    assert code == 0
    assert "5/50 sources, 45 free" in out.splitlines()[0]
    assert "Changed in the vault, not synced yet:" in out
    assert "  modified:  notes/a.md" in out and "  renamed:   notes/b.md → notes/b-moved.md" in out
    assert "  deleted:   notes/c.md" in out
    assert f"2 synced notes changed in the vault: {given} refresh notes/a.md notes/b-moved.md" in out

    # the advice works: after it, status has nothing left but the deletion
    assert run(capsys, *synced, "refresh", "notes/a.md", "notes/b-moved.md")[0] == 0
    code, out, _ = run(capsys, *synced, "status", "--json")
    assert [(c["path"], c["change"]) for c in json.loads(out)["local_changes"]] == [("notes/c.md", "deleted")]


def test_the_commands_status_prints_work_as_printed(synced: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """The next steps carry the global options this run was given (here the vault, the fake server and the
    notebook), so a command copied from anywhere talks to the same vault, server and notebook; status names
    the server it talks to."""
    notes = tmp_path / "vault" / "notes"
    (notes / "a.md").write_text("# a\nEdited since the sync.\n", encoding="utf-8")
    (notes / "b.md").write_text("# b\nEdited too.\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    code, out, _ = run(capsys, *synced, "status", "--json")
    report = json.loads(out)
    assert code == 0 and report["server"] == "fake"
    (step,) = report["next_steps"]
    assert step["command"] == f"nlmsync --vault {tmp_path / 'vault'} --server fake --notebook new:Status refresh " \
                              "notes/a.md notes/b.md"
    assert [c["command"] for c in report["local_changes"]] == [
        f"nlmsync --vault {tmp_path / 'vault'} --server fake --notebook new:Status refresh notes/{name}.md"
        for name in ("a", "b")]
    words = shlex.split(step["command"])
    assert words[0] == "nlmsync" and run(capsys, *words[1:])[0] == 0
    code, out, _ = run(capsys, *synced, "status")
    assert code == 0 and "  server: fake" in out.splitlines() and "Up to date: nothing to do." in out
    assert list(elsewhere.iterdir()) == []


def test_status_up_to_date(synced: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *synced, "status")
    assert code == 0 and "Up to date: nothing to do." in out and "Next steps" not in out


def test_over_capacity_names_the_setting(synced: list[str], monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NLMSYNC_CAPACITY", "3")
    code, out, _ = run(capsys, *synced, "status")
    assert code == 0
    assert "5/3 sources, 2 over capacity" in out.splitlines()[0]
    assert "the notebook holds 5 sources, capacity is 3: set 'capacity'" in out

    code, _, err = run(capsys, *synced, "refresh")  # the synced notes alone are over the setting
    assert code == 3
    assert err.splitlines()[0].startswith("nlmsync: error: notebook ") and \
        "holds 5 sources, capacity is 3: set 'capacity'" in err.splitlines()[0]


def test_an_upload_the_state_file_lost_is_adopted_by_status_itself(synced: list[str], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The state file is a cache of the notebook: `status` reads the notebook, finds the upload of a vault note
    a run recorded nowhere, reads it back (it holds the note's text) and takes it as the note's source."""
    from nlmsync.fake import FakeNotebookLM
    from nlmsync.sync.prepared import prepare_note

    vault = tmp_path / "vault"
    text = "# f\nA note uploaded by a run whose state file was lost.\n"
    (vault / "notes" / "f.md").write_text(text, encoding="utf-8")
    fake = FakeNotebookLM(state_path=fake_state(vault))
    (notebook_id,) = fake.notebooks
    (part,) = prepare_note("notes/f.md", text).parts
    orphan = fake.apply("source_add", {"notebook_id": notebook_id, "source_type": "text", "text": part.text,
                                       "title": part.title})["source_id"]
    fake.save()

    code, out, _ = run(capsys, *synced, "status", "--json")
    report = json.loads(out)
    assert code == 0 and report["orphan_source_ids"] == [] and report["next_steps"] == []
    assert [e["source_id"] for e in report["active_sources"] if e["path"] == "notes/f.md"] == [orphan]

    code, out, _ = run(capsys, *synced, "refresh", "--json", "notes/f.md")
    assert code == 0 and json.loads(out)["notes"][0]["branch"] == "reused"
    assert json.loads(out)["notes"][0]["source_ids"] == [orphan]


def test_every_section_of_the_text_report_reads_as_documented(capsys: pytest.CaptureFixture[str]) -> None:
    """The readable report of a status with something in every section, line for line (markup in paths and
    reasons printed as written)."""
    from nlmsync.app import (
        EvictionCandidate,
        EvictionEntry,
        LocalChangeEntry,
        NextStep,
        SourceMappingEntry,
        StatusReport,
    )
    from nlmsync.cli.sync_cmds import _print_status

    entry = SourceMappingEntry(path="a [x].md", part=1, part_count=1, source_id="s1", title="t", managed=True)
    report = StatusReport(
        server="fake", notebook_id="nb", title="T", capacity=3, capacity_source="remembered", source_count=5, active_sources=[entry], stale_sources=[entry],
        orphan_source_ids=["o1"], unmanaged_count=1,
        local_changes=[LocalChangeEntry(path="m.md", change="modified", command="nlmsync refresh m.md"),
                       LocalChangeEntry(path="r.md", change="renamed", renamed_to="q.md", command="nlmsync refresh q.md")],
        next_evictions=[EvictionCandidate(path="e.md", use_count=2, last_used="2024-01-01T00:00:00+00:00"),
                        EvictionCandidate(path="f.md", use_count=0)],
        pending_deletions=["p"],
        recent_evictions=[EvictionEntry(path="g.md", source_id="s", reason="lru [x]",
                                        evicted_at="2024-01-02T00:00:00+00:00")],
        next_steps=[NextStep(why="2 synced notes changed", command="nlmsync refresh m.md q.md")])
    capsys.readouterr()
    _print_status(report, json_output=False)
    assert capsys.readouterr().out.splitlines() == [
        "Notebook nb (T): 5/3 sources, 2 over capacity",
        "  capacity 3: given on an earlier run for this notebook",
        "  allowance: not reported by this server",
        "  1 synced, 1 missing from the notebook, 1 orphans, 1 not uploaded by nlmsync",
        "  server: fake",
        "", "Changed in the vault, not synced yet:", "  modified:  m.md", "  renamed:   r.md → q.md",
        "", "Synced, but the source is gone from the notebook:", "  a [x].md (s1)",
        "", "In the notebook with an nlmsync title, unknown to the state file:", "  o1",
        "", "Evicted first when room is needed:", "  e.md (used 2×, last 2024-01-01T00:00:00+00:00)",
        "  f.md (never asked about, last never)",
        "", "Waiting to be deleted: 1 sources",
        "", "Recently evicted:", "  g.md 2024-01-02T00:00:00+00:00 (lru [x])",
        "", "Next steps:", "  2 synced notes changed: nlmsync refresh m.md q.md",
    ]


def test_status_of_a_path_never_synced_says_why_as_refresh_would(synced: list[str], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "vault"
    (vault / "private").mkdir()
    (vault / "private" / "diary.md").write_text("# Diary\n", encoding="utf-8")
    (vault / "notes" / "draft.md").write_text("---\nnlmsync: false\n---\n# Draft\n", encoding="utf-8")
    (vault / "notes" / "blank.md").write_text("\n  \n", encoding="utf-8")
    (vault / "notes" / "new.md").write_text("# New\n", encoding="utf-8")
    (vault / ".nlmsync" / "config.toml").write_text('exclude = ["private/**"]\n', encoding="utf-8")
    asked = ["notes/a.md", "notes/mistyped.md", "private/diary.md", "notes/draft.md", "notes/blank.md",
             "notes/new.md", "notes"]
    code, out, _ = run(capsys, *synced, "status", "--json", *asked)
    assert code == 0
    assert [(n["path"], n["where"], n["reason"]) for n in json.loads(out)["notes"]] == [
        ("notes/a.md", "alone", None), ("notes/mistyped.md", "no such note", None),
        ("private/diary.md", "excluded", "excluded by pattern"),
        ("notes/draft.md", "excluded", "excluded (nlmsync: false)"),
        ("notes/blank.md", "not synced", "empty"), ("notes/new.md", "not synced", None), ("notes", "folder", None)]
    code, out, _ = run(capsys, *synced, "status", "notes/mistyped.md", "private/diary.md", "notes/blank.md")
    assert "  notes/mistyped.md: no such note\n" in out and "  private/diary.md: excluded by pattern\n" in out
    assert "  notes/blank.md: not synced (empty)\n" in out
