"""`refresh --json` prints its one JSON document whenever it stops with exit 3, 4, 5 or 6 — what was done and
recorded, even when that is nothing — and the error stays one line on stderr (`nlmsync.cli.main` in-process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlmsync.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main([*args])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


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
