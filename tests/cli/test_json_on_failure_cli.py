"""`refresh --json` prints its one JSON document whenever it stops with exit 3, 4, 5 or 6 — what was done and
recorded, even when that is nothing — and the error stays one line on stderr; what a run notes beyond its notes
goes to stderr on a terminal and into the document with --json (`nlmsync.cli.main` in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import fake_state
from tests.cli_helpers import run_cli as run

CASES = {
    "capacity": (["--server", "fake", "refresh", "--capacity", "1"], 3, []),
    "unreachable": (["--server", "/nonexistent/notebooklm-mcp --transport stdio", "refresh"], 4, []),
    "login": (["--server", "fake --auth-required", "refresh"], 5, []),
    "partial": (["--server", "fake --error-on source_add:2=Internal", "refresh"], 6,
                [("a.md", "added"), ("b.md", "failed")]),
}


@pytest.mark.parametrize(("args", "code", "notes"), CASES.values(), ids=CASES.keys())
def test_refresh_json_reports_what_was_done_on_every_stop(tmp_path: Path, capsys, args: list[str], code: int,
                                                          notes: list[tuple[str, str]]):
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("alpha", encoding="utf-8")
    (vault / "b.md").write_text("beta", encoding="utf-8")
    got, out, err = run(capsys, "--vault", str(vault), "--notebook", "new:Json", *args, "--json", "--concurrency",
                        "1", "a.md", "b.md")
    assert got == code, err
    report = json.loads(out)  # exactly one JSON document
    assert [(n["path"], n["branch"]) for n in report["notes"]] == notes
    assert err.startswith("nlmsync: error: ") and "Traceback" not in err


def test_a_lookalike_left_alone_is_said_on_stderr_and_in_the_json_report(tmp_path: Path, capsys):
    from nlmsync.fake import FakeNotebookLM
    from nlmsync.sync.titles import source_title, title_hash

    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "inbox.md").write_text("Buy milk.\n", encoding="utf-8")
    fake = FakeNotebookLM(state_path=fake_state(vault))
    nb = fake.apply("notebook_create", {"title": "Mine"})["notebook_id"]
    title = source_title("inbox.md", title_hash("Buy milk.\n"))
    mine = fake.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": "my list", "title": title})
    notice = (f"source {mine['source_id']} is titled like an nlmsync upload ({title}) but does not hold that text; "
              "left alone as unmanaged")
    common = ["--vault", str(vault), "--server", "fake", "--notebook", nb, "refresh", "inbox.md"]
    code, out, err = run(capsys, *common)
    assert (code, err) == (0, f"nlmsync: note: {notice}\n") and out.startswith("added")
    code, out, err = run(capsys, *common, "--json")
    assert (code, err) == (0, "") and json.loads(out)["notices"] == [notice]
