"""Faults over real transports: a dropping fake-server process exits, the client reconnects (or not: the retry
policy), the state file survives it; and the `fake-server` / `server-info` commands behave on the command line."""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.cli_helpers import fake_state
from tests.cli_helpers import run_cli as _nlmsync

from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionLostError,
    RateLimitedError,
    ServerCapacityError,
    ServerError,
    exit_code_for,
)
from nlmsync.fake import DROP_EXIT_CODE, serve_in_process
from nlmsync.notebooklm import FAKE_STATE_FILE, connect


def _state(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / FAKE_STATE_FILE).read_text(encoding="utf-8"))


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_stdio_drop_on_read_is_retried_by_a_new_process(tmp_path: Path, sleeps: Any) -> None:
    async with connect("fake-stdio --drop-on notebook_list:1", Settings(), state_dir=tmp_path, sleep=sleeps) as client:
        with anyio.fail_after(60):
            await client.notebook_create("N")
            listed = await client.notebook_list()
        assert [n.title for n in listed.notebooks] == ["N"]
        assert client.connections_opened == 2
    assert len(sleeps.delays) == 1
    calls = [(c["tool"], c["status"]) for c in _state(tmp_path)["calls"]]
    assert calls == [("notebook_create", "success"), ("notebook_list", "dropped"), ("notebook_list", "success")]


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_stdio_add_applied_but_answer_lost(tmp_path: Path, sleeps: Any) -> None:
    async with connect("fake-stdio --drop-on source_add:1:after", Settings(), state_dir=tmp_path, sleep=sleeps) as client:
        with anyio.fail_after(60):
            nb = (await client.notebook_create("N")).notebook_id
            with pytest.raises(ConnectionLostError) as info:
                await client.source_add_text(nb, "text", "a.md · 0001")
            assert exit_code_for(info.value) == 4
            assert [s.title for s in (await client.notebook_get(nb)).sources] == ["a.md · 0001"]
    assert sleeps.delays == []
    assert [c["tool"] for c in _state(tmp_path)["calls"]].count("source_add") == 1


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_http_server_exits_on_drop(spawn_http_fake: Any, sleeps: Any) -> None:
    url = spawn_http_fake("--drop-on", "source_add:1:before")
    async with connect(url, Settings(), sleep=sleeps) as client:
        with anyio.fail_after(60):
            nb = (await client.notebook_create("N")).notebook_id
            with pytest.raises(ConnectionLostError):
                await client.source_add_text(nb, "text", "t")
    assert spawn_http_fake.procs[0].wait(timeout=30) == DROP_EXIT_CODE
    assert sleeps.delays == []


@pytest.fixture(params=["in-process", pytest.param("stdio", marks=pytest.mark.slow),
                        pytest.param("http", marks=pytest.mark.slow)])
def fake_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., str]:
    """A `--server` spec for the fake with the given switches, keeping its state in tmp_path: served in this
    process (`fake`), or by a fake-server process over stdio (`fake-stdio`) or HTTP."""

    def make(*switches: str) -> str:
        if request.param == "in-process":
            return "fake " + shlex.join(switches)
        if request.param == "stdio":
            return "fake-stdio " + shlex.join(switches)
        return request.getfixturevalue("spawn_http_fake")("--state", str(tmp_path / FAKE_STATE_FILE), *switches)

    return make


@pytest.mark.anyio
async def test_every_fault_switch_works_over_the_transport(fake_spec: Callable[..., str], tmp_path: Path,
                                                           sleeps: Any) -> None:
    spec = fake_spec("--capacity", "1", "--latency", "0.1", "--error-on", "source_rename=renames are off today",
                     "--rate-limit-on", "notebook_query:1", "--empty-sources-once",
                     "--drop-on", "notebook_list:1:after")
    async with connect(spec, Settings(retry_attempts=1), state_dir=tmp_path, sleep=sleeps,
                       in_process_fake=serve_in_process) as client:
        with anyio.fail_after(60):
            await client.server_info()
            started = time.monotonic()
            nb = (await client.notebook_create("N")).notebook_id
            assert time.monotonic() - started >= 0.1  # --latency
            added = await client.source_add_text(nb, "Heapsort builds a heap.", "a.md · 01")
            with pytest.raises(ServerCapacityError):  # --capacity
                await client.source_add_text(nb, "Quicksort picks a pivot.", "b.md · 02")
            assert (await client.notebook_get(nb)).sources == []  # --empty-sources-once
            assert [s.id for s in (await client.notebook_get(nb)).sources] == [added.source_id]
            with pytest.raises(ServerError, match="renames are off today"):  # --error-on
                await client.source_rename(nb, added.source_id, "c")
            with pytest.raises(RateLimitedError):  # --rate-limit-on TOOL:N
                await client.notebook_query(nb, "heapsort")
            assert (await client.notebook_query(nb, "heapsort")).sources_used == [added.source_id]
            with pytest.raises(ConnectionLostError):  # --drop-on TOOL:N:after (answer lost)
                await client.notebook_list()
    calls = [(c["tool"], c["status"], c["dropped"]) for c in _state(tmp_path)["calls"]]
    assert calls == [("server_info", "success", None), ("notebook_create", "success", None),
                     ("source_add", "success", None), ("source_add", "error", None),
                     ("notebook_get", "success", None), ("notebook_get", "success", None),
                     ("source_rename", "error", None), ("notebook_query", "error", None),
                     ("notebook_query", "success", None), ("notebook_list", "success", "after")]


@pytest.mark.anyio
async def test_drop_on_call_and_auth_required_over_the_transport(fake_spec: Callable[..., str], tmp_path: Path,
                                                                 sleeps: Any) -> None:
    spec = fake_spec("--auth-required", "--drop-on-call", "3")
    async with connect(spec, Settings(retry_attempts=1), state_dir=tmp_path, sleep=sleeps,
                       in_process_fake=serve_in_process) as client:
        with anyio.fail_after(60):
            assert (await client.server_info()).auth_status == "not_configured"
            with pytest.raises(AuthenticationRequiredError) as info:
                await client.notebook_list()
            assert exit_code_for(info.value) == 5
            with pytest.raises(ConnectionLostError):
                await client.notebook_get("n")
    calls = [(c["tool"], c["status"], c["dropped"]) for c in _state(tmp_path)["calls"]]
    assert calls == [("server_info", "success", None), ("notebook_list", "error", None),
                     ("notebook_get", "dropped", "before")]


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_http_server_saves_its_state_when_terminated(spawn_http_fake: Any, tmp_path: Path) -> None:
    url = spawn_http_fake("--state", str(tmp_path / FAKE_STATE_FILE))
    async with connect(url, Settings()) as client:
        with anyio.fail_after(60):
            await client.notebook_create("N")
            await client.notebook_list()  # a read: logged in memory, written when the server stops
    proc = spawn_http_fake.procs[0]
    proc.terminate()
    proc.wait(timeout=30)
    assert [c["tool"] for c in _state(tmp_path)["calls"]] == ["notebook_create", "notebook_list"]


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


def test_server_info_survives_a_drop_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _nlmsync(capsys, "--vault", str(tmp_path), "--server", "fake --drop-on server_info:1",
                              "server-info", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["auth_status"] == "configured" and report["notebook_count"] == 0
    assert fake_state(tmp_path).exists()


def test_auth_required_fake_exits_5_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _nlmsync(capsys, "--vault", str(tmp_path), "--server", "fake --auth-required", "server-info")
    assert code == 5
    # what the server did tell is printed before the error: its version and that nobody is logged in
    assert "version:     0.15.8" in out and "not logged in" in out
    lines = err.splitlines()
    assert lines[0] == "nlmsync: error: listing the notebooks: the NotebookLM server needs a Google login (No authentication found)"
    assert all(line.startswith("nlmsync: ") for line in lines)


def test_missing_server_command_exits_4(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _nlmsync(capsys, "--vault", str(tmp_path), "--server", "no-such-mcp-server --stdio", "server-info")
    assert code == 4
    assert err.startswith("nlmsync: error: MCP server command not found: no-such-mcp-server")


@pytest.mark.slow  # waits out the connection retries' real backoff
def test_nothing_listening_exits_4_quickly_with_one_error_line(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _nlmsync(capsys, "--vault", str(tmp_path), "--server", "http://127.0.0.1:1/mcp", "server-info",
                              "--json")
    assert code == 4
    report = json.loads(out)  # the document, with what could not be learned as null
    assert report["version"] is None and report["logged_in"] is None and report["error"].startswith("cannot connect")
    lines = err.splitlines()
    assert lines[0] == "nlmsync: error: cannot connect to http://127.0.0.1:1/mcp: All connection attempts failed"
    assert lines[1].startswith("nlmsync: hint: ") and len(lines) == 2


@pytest.mark.parametrize(("flag", "value"), [("--drop-on", "source_add"), ("--error-on", "x"),
                                             ("--drop-on-call", "0")])
def test_bad_fault_switch_is_usage_error(capsys: pytest.CaptureFixture[str], flag: str, value: str) -> None:
    code, _, err = _nlmsync(capsys, "fake-server", flag, value)
    assert code == 2
    assert err.startswith(f"nlmsync: error: {flag}")
    assert len(err.splitlines()) == 1


def test_every_fault_switch_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _nlmsync(capsys, "fake-server", "--help")
    assert code == 0
    for switch in ("--latency", "--drop-on-call", "--drop-on", "--error-on", "--empty-sources-once",
                   "--auth-required", "--rate-limit-on", "--capacity", "--state", "--transport", "--port",
                   "--expire-login-after", "--renewal-fails", "--login-back-after", "--usage-used", "--tier",
                   "--without-tool", "--network-down"):
        assert switch in out


def test_in_process_fake_takes_the_same_switches_as_the_fake_server_command() -> None:
    from nlmsync.cli import app
    from nlmsync.fake.faults import FAKE_SWITCHES

    root = app
    command = root.commands["fake-server"]
    global_options = {opt for param in root.params for opt in param.opts} - {"--state"}  # fake-server's own --state
    options = {opt for param in command.params for opt in param.opts if opt.startswith("--")}
    assert FAKE_SWITCHES == options - global_options - {"--transport", "--host", "--port", "--help"}
