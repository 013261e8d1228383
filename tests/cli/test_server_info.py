"""`nlmsync server-info`: what a new user learns from it before logging in, and the way to install the real
server when its command is missing (the real server's own run is in tests/notebooklm/test_real_server.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


def _command(folder: Path, name: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("#!/bin/sh\n", encoding="utf-8")
    (folder / name).chmod(0o755)


@pytest.mark.parametrize("nlm", ["on PATH", "beside nlmsync only"])
def test_not_logged_in_prints_the_version_then_exits_5_with_a_login_that_runs_as_given(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        nlm: str) -> None:
    on_path, venv = tmp_path / "bin", tmp_path / "my venv" / "bin"
    _command(venv, "nlm")  # installed in nlmsync's virtual environment, which is not activated
    if nlm == "on PATH":
        _command(on_path, "nlm")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setattr(sys, "executable", str(venv / "python"))
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake --auth-required", "server-info")
    assert code == 5
    assert out.splitlines()[1].startswith("version:     ") and len(out.splitlines()[1]) > len("version:     ")
    assert out.splitlines()[2].startswith("auth status: not logged in")
    login = "'nlm login'" if nlm == "on PATH" else f"'{venv / 'nlm'}' login"
    assert err.splitlines() == [
        "nlmsync: error: listing the notebooks: the NotebookLM server needs a Google login (No authentication found)",
        f"nlmsync: hint: run {login} (or give the server NOTEBOOKLM_COOKIES), then try again"]


def test_not_logged_in_json_is_one_document(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake --auth-required", "server-info", "--json")
    assert code == 5 and err.startswith("nlmsync: error: listing the notebooks: ")
    report = json.loads(out)
    assert report["logged_in"] is False and report["notebook_count"] is None and report["version"]
    # the error as every command's error document has it: the line, the exit code, the hint
    error, hint = (line.split(": ", 2)[2] for line in err.splitlines())
    assert (report["error"], report["exit_code"], report["hint"]) == (error, 5, hint) and "login" in hint


def test_logged_in_lists_the_notebook_count(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "server-info", "--json")
    report = json.loads(out)
    assert code == 0 and report["logged_in"] is True and report["notebook_count"] == 0
    assert (report["error"], report["exit_code"], report["hint"]) == (None, 0, None)


def test_missing_default_server_says_how_to_install_it(vault: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no notebooklm-mcp on it
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))  # nor beside the interpreter
    code, out, err = run(capsys, "--vault", str(vault), "server-info")
    assert (code, out) == (4, "")
    assert err.splitlines()[0] == "nlmsync: error: MCP server command not found: notebooklm-mcp"
    assert "pip install notebooklm-mcp-cli" in err.splitlines()[1]
    code, _, err = run(capsys, "--vault", str(vault), "--server", "other-mcp --stdio", "server-info")
    assert code == 4 and "pip install" not in err


def test_a_server_path_cut_at_a_space_is_said_to_need_quotes(vault: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    _command(tmp_path / "My Tools", "mcp-server")
    code, out, err = run(capsys, "--vault", str(vault), "--server", f"{tmp_path}/My Tools/mcp-server --stdio",
                         "server-info")
    assert (code, out) == (4, "")
    hint = (f"the path looks cut at a space ('{tmp_path}/My Tools' exists): quote it inside --server, as in "
            f"--server \"'{tmp_path}/My Tools/…' --transport stdio\"")
    assert err.splitlines() == [f"nlmsync: error: MCP server command not found: {tmp_path}/My",
                                f"nlmsync: hint: {hint}"]


def test_a_server_that_does_not_answer_is_not_sent_back_to_server_info(vault: Path, monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as unused:  # a port nothing listens on once closed
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    monkeypatch.setenv("NLMSYNC_RETRY_ATTEMPTS", "1")
    code, out, err = run(capsys, "--vault", str(vault), "--server", f"http://127.0.0.1:{port}/mcp", "server-info")
    assert (code, out) == (4, "")
    error, hint = err.splitlines()
    assert error.startswith(f"nlmsync: error: cannot connect to http://127.0.0.1:{port}/mcp")
    assert hint.startswith("nlmsync: hint: check --server") and "server-info" not in hint
