"""Packing through `nlmsync.cli.main` in-process: what `refresh --all`, its dry run, `status PATH` and a vault
that does not fit print, in words and in JSON, and their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import run_cli as run


def _vault(tmp_path: Path, count: int = 12) -> Path:
    vault = tmp_path / "vault"
    for i in range(count):
        note = vault / f"d{i % 2}" / f"n{i:02}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"# Note {i}\n\nBody of note {i}.\n", encoding="utf-8")
    return vault


def test_refresh_all_packs_a_vault_bigger_than_the_notebook_and_says_so(tmp_path: Path, capsys) -> None:
    vault = _vault(tmp_path)
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Packed"]
    code, out, err = run(capsys, *common, "refresh", "--all", "--capacity", "5")
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("pack added") and "(12 notes" in out
    assert out.rstrip().endswith("1/5 sources: 0 notes alone, 1 pack holding 12 notes.")

    (vault / "d1" / "n03.md").write_text("# Note 3\n\nEdited.\n", encoding="utf-8")
    code, out, _ = run(capsys, *common, "refresh", "--all", "--capacity", "5", "--dry-run", "--json")
    plan = json.loads(out)
    assert code == 0 and plan["dry_run"] is True
    (pack,) = plan["packs"]
    assert (pack["branch"], pack["reason"], pack["note_count"]) == ("replaced", "1 changed: d1/n03.md", 12)
    assert pack["paths"] == sorted(pack["paths"]) and "d1/n03.md" in pack["paths"]

    code, out, _ = run(capsys, *common, "status", "--json", "d1/n03.md", str(vault / "d0" / "n00.md"))
    status = json.loads(out)
    assert code == 0 and status["layout"] == {"alone_note_count": 0, "pack_count": 1, "packed_note_count": 12}
    assert [(n["path"], n["where"]) for n in status["notes"]] == [("d1/n03.md", "pack"), ("d0/n00.md", "pack")]
    assert [c["path"] for c in status["local_changes"]] == ["d1/n03.md"]
    code, out, _ = run(capsys, *common, "status")  # a packed note counts as synced, as a note alone does
    counts = "  12 synced, 0 missing from the notebook, 0 orphans, 0 not uploaded by nlmsync"
    assert code == 0 and counts in out.splitlines()


def test_a_vault_that_does_not_fit_even_in_packs_exits_3_before_any_upload(tmp_path: Path, capsys) -> None:
    vault = _vault(tmp_path, 30)
    (vault / ".nlmsync").mkdir()
    (vault / ".nlmsync" / "config.toml").write_text("source_max_bytes = 1000\n", encoding="utf-8")
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Tight",
                         "refresh", "--all", "--capacity", "4")
    assert code == 3 and out == ""
    line = err.splitlines()[0]
    assert line.startswith("nlmsync: error: the 30 notes") and "1 source short; nothing was uploaded" in line
    assert "'pack_free'" in line and "Traceback" not in err


def test_a_dry_run_that_cannot_read_the_notebook_plans_for_an_empty_one_and_says_so(tmp_path: Path, capsys) -> None:
    """No login yet: the plan for the vault (here, how many packs it needs) is still known, and said to be for an
    empty notebook; a run that would write still stops for the login (exit 5)."""
    vault = _vault(tmp_path)
    common = ["--vault", str(vault), "--server", "fake --auth-required", "--notebook", "new:Notes:"]
    code, out, err = run(capsys, *common, "refresh", "--all", "--capacity", "5", "--dry-run")
    assert code == 0, err
    assert err.startswith("nlmsync: note: the notebook could not be read (listing the notebooks: the NotebookLM "
                          "server needs a Google login") and err.rstrip().endswith("this is the plan for an empty notebook")
    assert out.rstrip().splitlines()[-1] == "Dry run — would do: packs: 1 added. Notebook new:Notes:: 0/5 sources."
    code, out, _ = run(capsys, *common, "refresh", "--all", "--capacity", "5", "--dry-run", "--json")
    report = json.loads(out)
    assert code == 0 and report["dry_run"] and [p["note_count"] for p in report["packs"]] == [12]
    assert report["notices"][0].endswith("this is the plan for an empty notebook")
    code, _, err = run(capsys, *common, "refresh", "--all", "--capacity", "5")
    assert code == 5 and "Google login" in err


def test_a_packed_refresh_prints_a_line_per_changed_pack_not_every_note(tmp_path: Path, capsys) -> None:
    """A plain `refresh` of a packed notebook says what `refresh --all` says: a line per pack it changed, naming the
    notes that changed; an idle one prints its summary alone, and `-v` lists every pack with its notes."""
    vault = _vault(tmp_path, 120)
    (vault / ".nlmsync").mkdir()
    (vault / ".nlmsync" / "config.toml").write_text("source_max_bytes = 1000\npack = \"always\"\n", encoding="utf-8")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", "new:Packed"]
    code, out, err = run(capsys, *common, "refresh", "--all")
    assert code == 0, err
    packs = sum(1 for line in out.splitlines() if line.startswith("pack added"))
    assert packs > 3
    (vault / "d1" / "n03.md").write_text("# Note 3\n\nEdited.\n", encoding="utf-8")
    code, out, _ = run(capsys, *common[:4], "refresh")
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2, out
    assert lines[0].startswith("pack replaced") and "1 changed: d1/n03.md" in lines[0]
    assert lines[1].startswith("packs: 1 replaced,")  # no note counted as replaced for being in that pack
    code, out, _ = run(capsys, *common[:4], "refresh")
    assert code == 0 and len(out.splitlines()) == 1 and "reused" not in out.split("packs:")[0]
    code, out, _ = run(capsys, *common[:4], "refresh", "-v")
    assert code == 0 and sum(1 for line in out.splitlines() if line.startswith("    d")) == 120
    code, out, _ = run(capsys, *common[:4], "refresh", "--json", "d1/n05.md")
    (note,) = json.loads(out)["notes"]
    assert (note["path"], note["branch"]) == ("d1/n05.md", "reused")
