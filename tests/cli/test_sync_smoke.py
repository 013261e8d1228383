"""End to end through the real CLI in subprocesses: refresh and ask over the fixture vault, against the bundled
fake (`--server fake`) and over streamable HTTP (`nlmsync fake-server --transport http`); a bad path in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nlmsync.cli import main

TIMEOUT = 120


def nlmsync(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLMSYNC_")}
    return subprocess.run([sys.executable, "-m", "nlmsync", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def as_json(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLMSYNC_")}
    with subprocess.Popen([sys.executable, "-m", "nlmsync", "fake-server", "--transport", "http", "--port", "0",
                           "--state", str(tmp_path / "http-fake.json")],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env) as proc:
        try:
            assert proc.stdout is not None
            url = proc.stdout.readline().strip()  # blocks until the server announces where it listens
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), (url, proc.poll())
            yield url
        finally:
            proc.terminate()
            proc.wait(timeout=30)


def run_scenario(vault: Path, server: str, *, full: bool) -> None:
    common = ["--vault", str(vault), "--server", server, "--notebook", "new:Smoke"]
    first = as_json(nlmsync(*common, "refresh", "--json", "algorithms", cwd=vault))
    added = {n["path"] for n in first["notes"] if n["branch"] == "added"}
    assert "algorithms/sorting/heapsort.md" in added and len(added) == len(first["notes"]) >= 5

    answer = as_json(nlmsync(*common, "ask", "--json", "How does heapsort work?", cwd=vault))
    assert answer["notebook_id"] == first["notebook_id"]  # new:TITLE was recorded and reused
    assert "max-heap" in answer["answer"]
    cited = {(c["path"], c["heading"]) for c in answer["citations"]}
    assert ("algorithms/sorting/heapsort.md", "How does it work?") in cited
    assert answer["conversation_id"]
    heapsort = next(n for n in answer["notes"] if n["path"] == "algorithms/sorting/heapsort.md")
    assert heapsort["branch"] == "reused"
    if not full:
        return

    # a follow-up in text mode: same conversation, the first turn's sources carried over, citations by heading
    text = nlmsync(*common, "ask", "What does sift down cost in heapsort?", cwd=vault)
    assert text.returncode == 0, text.stderr
    assert text.stderr == ""  # not a terminal: no progress display
    assert re.search(rf"^conversation {answer['conversation_id']} · \d+ sources \([1-9]\d* carried over\)$",
                     text.stdout, re.MULTILINE), text.stdout
    # the fake numbers citations by its own passage ranking: the number is not ours to assert
    assert re.search(r"^  \[\d+\] algorithms/sorting/heapsort\.md( › .+)?$", text.stdout, re.MULTILINE), text.stdout


@pytest.mark.slow
def test_refresh_and_ask_over_stdio(vault: Path):
    run_scenario(vault, "fake", full=True)


@pytest.mark.slow
def test_refresh_and_ask_over_http(vault: Path, http_server: str):
    run_scenario(vault, http_server, full=False)


def test_bad_path_is_one_line_exit_2(vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch):
    """In-process (`nlmsync.cli.main`): the refusal needs no process boundary."""
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    monkeypatch.chdir(vault)
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(vault), "--server", "fake", "--notebook", "new:Smoke", "refresh", "../outside.md"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.startswith("nlmsync: error:") and "Traceback" not in err
