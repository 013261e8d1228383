"""End to end through the real CLI in subprocesses: refresh and ask over the fixture vault, against the bundled
fake (`--server fake`) and over streamable HTTP (`nlmsync fake-server --transport http`); a bad path in-process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import environment_without_settings

from nlmsync.cli import main

TIMEOUT = 120


def nlmsync(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = environment_without_settings()
    return subprocess.run([sys.executable, "-m", "nlmsync", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)


def as_json(result: subprocess.CompletedProcess[str]) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def run_scenario(vault: Path, server: str, *, full: bool, refresh_branch: str = "added") -> dict:
    """refresh (every note takes `refresh_branch`) then ask (then, `full`, a follow-up in text mode); the first
    answer's JSON document."""
    common = ["--vault", str(vault), "--server", server, "--notebook", "new:Smoke"]
    first = as_json(nlmsync(*common, "refresh", "--json", "algorithms", cwd=vault))
    taken = {n["path"] for n in first["notes"] if n["branch"] == refresh_branch}
    assert "algorithms/sorting/heapsort.md" in taken and len(taken) == len(first["notes"]) >= 5

    answer = as_json(nlmsync(*common, "ask", "--json", "How does heapsort work?", cwd=vault))
    assert answer["notebook_id"] == first["notebook_id"]  # new:TITLE was recorded and reused
    assert "max-heap" in answer["answer"]
    cited = {(c["path"], c["heading"]) for c in answer["citations"]}
    assert ("algorithms/sorting/heapsort.md", "How does it work?") in cited
    assert answer["conversation_id"]
    heapsort = next(n for n in answer["notes"] if n["path"] == "algorithms/sorting/heapsort.md")
    assert heapsort["branch"] == "reused"
    if not full:
        return answer

    # a follow-up in text mode: same conversation, the first turn's sources carried over, citations by heading
    text = nlmsync(*common, "ask", "What does sift down cost in heapsort?", cwd=vault)
    assert text.returncode == 0, text.stderr
    assert text.stderr == ""  # not a terminal: no progress display
    followed = rf"^followed up in conversation {answer['conversation_id']} · \d+ sources \([1-9]\d* carried over\)$"
    assert re.search(followed, text.stdout, re.MULTILINE), text.stdout
    # the fake numbers citations by its own passage ranking: the number is not ours to assert
    assert re.search(r"^  \[\d+\] algorithms/sorting/heapsort\.md( › .+)?$", text.stdout, re.MULTILINE), text.stdout
    return answer


@pytest.mark.slow
def test_refresh_and_ask_over_stdio_then_in_process(vault: Path):
    """The stdio fake process and the in-process fake keep the same notebooks in the vault's state folder."""
    first = run_scenario(vault, "fake-stdio", full=True)
    second = run_scenario(vault, "fake", full=True, refresh_branch="reused")
    assert second["notebook_id"] == first["notebook_id"]


@pytest.mark.slow  # three nlmsync processes
def test_refresh_and_ask_over_http(vault: Path, fake_notebooklm):
    """Through the pytest plugin's fake (nlmsync.testing) over HTTP: what the commands did is in the fake."""
    answer = run_scenario(vault, fake_notebooklm.url, full=False)
    notebook = fake_notebooklm.notebooks[answer["notebook_id"]]
    assert notebook.title == "Smoke"
    titles = fake_notebooklm.source_titles(notebook.id)
    assert any(t.startswith("algorithms/sorting/heapsort.md · ") for t in titles)
    tools = fake_notebooklm.tools_called()
    assert tools.count("notebook_create") == 1 and tools.count("source_add") == len(titles)
    assert tools[-1] == "notebook_query"


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
