"""`nlmsync sources` on the command line: the notebook's sources as a reader wants them — packs with the range of
notes each holds, notes alone, sources added by hand — and one JSON document with `--json`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


def test_sources_lists_packs_with_their_ranges_then_the_notes_alone(vault: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (vault / ".nlmsync").mkdir(exist_ok=True)
    (vault / ".nlmsync" / "config.toml").write_text('pack = "always"\nsource_max_bytes = 4000\n', encoding="utf-8")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Sources"]
    code, out, err = run(capsys, *common, "refresh", "--all", "--json")
    assert code == 0, err
    packs = json.loads(out)["packs"]
    code, out, err = run(capsys, *common, "sources", "--json")
    assert code == 0, err
    listed = json.loads(out)
    assert listed["schema_version"] == 1 and listed["pack_count"] == len(packs) > 1
    assert [(s["first_path"], s["last_path"]) for s in listed["sources"] if s["kind"] == "pack"] == [
        (p["paths"][0], p["paths"][-1]) for p in packs]

    code, out, err = run(capsys, *common, "sources")
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith(f"Notebook {listed['notebook_id']} (Sources): {listed['source_count']}/50 sources")
    assert f"{len(packs)} packs holding {listed['packed_note_count']} notes" in lines[1]
    shown = lines[lines.index("Packs (the range of notes each holds):") + 1:]
    for pack, line in zip(packs, shown, strict=False):
        assert line.strip().startswith(f"{pack['paths'][0]} … {pack['paths'][-1]}  ({len(pack['paths'])} notes")
        assert line.rstrip().endswith(pack["source_id"])


def test_sources_quiet_prints_the_counts_only(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Quiet"]
    assert run(capsys, *common, "refresh", "-q", "cooking/")[0] == 0
    code, out, _ = run(capsys, *common, "sources", "-q")
    assert code == 0 and out.splitlines()[1:] == ["  4 notes alone, 0 not uploaded by nlmsync"]
    code, out, _ = run(capsys, *common, "sources")
    assert "Notes alone:" in out and "cooking/kimchi-jjigae.md" in out


def test_sources_counts_one_note_alone_in_the_singular(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:One"]
    assert run(capsys, *common, "refresh", "-q", "cooking/kimchi-jjigae.md")[0] == 0
    code, out, _ = run(capsys, *common, "sources", "-q")
    assert code == 0 and out.splitlines()[1:] == ["  1 note alone, 0 not uploaded by nlmsync"]


def test_sources_lists_each_kind_under_its_heading_and_a_split_notes_parts(capsys: pytest.CaptureFixture[str]) -> None:
    from nlmsync.app.results import NotebookSource, SourcesReport
    from nlmsync.cli.notebook_cmds import _print_sources

    sources = [NotebookSource(source_id="s1", title="big.md · 1", kind="note", path="big.md", part=0, part_count=2),
               NotebookSource(source_id="s2", title="big.md · 2", kind="note", path="big.md", part=1, part_count=2),
               NotebookSource(source_id="s3", title="small.md", kind="note", path="small.md", part=0, part_count=1),
               NotebookSource(source_id="s6", title="old.md", kind="note", path="old.md"),  # parts not recorded
               NotebookSource(source_id="s4", title="My own source", kind="unmanaged"),
               NotebookSource(source_id="s5", title="gone.md · abc", kind="orphan")]
    _print_sources(SourcesReport(notebook_id="nb", title="T", capacity=50, source_count=6, sources=sources,
                                 alone_count=4, unmanaged_count=1, orphan_count=1), quiet=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[lines.index("Notes alone:") + 1:lines.index("Notes alone:") + 5] == [
        "  big.md (part 1 of 2)  s1", "  big.md (part 2 of 2)  s2", "  small.md  s3", "  old.md  s6"]
    assert lines[-6:] == ["", "Not uploaded by nlmsync (never changed or evicted):", "  My own source  s4", "",
                          "With nlmsync's titles but unknown to the state file ('nlmsync status' says what to do):",
                          "  gone.md · abc  s5"]
