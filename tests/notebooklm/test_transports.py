"""`--server SPEC` resolution, and what an unreachable server looks like to the caller."""

from __future__ import annotations

import io
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.server import Server
from mcp.server.mcpserver import MCPServer

from nlmsync.config import Settings
from nlmsync.errors import ServerCommandNotFoundError, ServerUnreachableError, UsageError, exit_code_for
from nlmsync.fake import FakeNotebookLM, build_fake_server, serve_in_process
from nlmsync.notebooklm import FAKE_STATE_FILE, connect, resolve_server
from nlmsync.notebooklm.transports import in_process_transport, login_command, low_level_server


def test_fake_stdio_spec_runs_this_python_with_a_state_file(tmp_path: Path) -> None:
    target = resolve_server("fake-stdio --capacity 5", state_dir=tmp_path)
    assert target.kind == "stdio" and target.params is not None
    assert target.params.command == sys.executable
    assert target.params.args == ["-m", "nlmsync", "fake-server", "--transport", "stdio",
                                  "--state", str(tmp_path / FAKE_STATE_FILE), "--capacity", "5"]


def test_fake_stdio_spec_without_state_dir_keeps_memory_only() -> None:
    target = resolve_server("fake-stdio")
    assert target.params is not None and "--state" not in target.params.args


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_fake_spec_serves_the_fake_in_this_process_and_keeps_its_state(tmp_path: Path) -> None:
    """`--server fake` starts no second process: the fake runs in-process with the switches given, and what
    it was given is in its state file once the client closes, for the next run to find."""
    target = resolve_server("fake --capacity 1 --error-on source_rename=off", state_dir=tmp_path,
                            in_process_fake=serve_in_process)
    assert target.kind == "in-process" and target.params is None
    async with connect("fake --capacity 1", Settings(), state_dir=tmp_path, in_process_fake=serve_in_process) as client:
        with anyio.fail_after(30):
            nb = (await client.notebook_create("N")).notebook_id
            await client.source_add_text(nb, "Heapsort builds a heap.", "a.md · 01")
            await client.notebook_list()
    async with connect("fake-stdio --capacity 1", Settings(), state_dir=tmp_path) as client:  # the same file
        with anyio.fail_after(60):
            assert [s.title for s in (await client.notebook_get(nb)).sources] == ["a.md · 01"]
    saved = (tmp_path / FAKE_STATE_FILE).read_text(encoding="utf-8")
    assert saved.count('"tool": "notebook_list"') == 1  # a read-only call is kept too: saved on close


@pytest.mark.parametrize("spec", ["fake --transport http", "fake --capacity 0", "fake --drop-on source_add",
                                  "fake --latency=-1"])
def test_bad_in_process_fake_switches_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError, match=f"^--server '{spec}': ") as info:
        resolve_server(spec, in_process_fake=serve_in_process)
    assert "--" in str(info.value).split(": ", 1)[1] and "\n" not in str(info.value)  # names the switch


def test_the_in_process_fake_is_what_the_caller_hands_in(tmp_path: Path) -> None:
    """The client package builds no fake of its own: `fake` is served by the factory it is given (the app's is
    the bundled fake), which gets the switches and the default state file."""
    built: list[tuple[list[str], Path | None]] = []
    server = build_fake_server(FakeNotebookLM())

    def factory(switches: Sequence[str], state_path: Path | None) -> tuple[MCPServer, Callable[[], None]]:
        built.append((list(switches), state_path))
        return server, lambda: None

    target = resolve_server("fake --capacity 2", state_dir=tmp_path, in_process_fake=factory)
    assert target.server is server and built == [(["--capacity", "2"], tmp_path / FAKE_STATE_FILE)]
    with pytest.raises(UsageError, match="^--server 'fake': no in-process fake was given here; use 'fake-stdio'"):
        resolve_server("fake")


def test_command_line_is_split_like_a_shell_and_keeps_the_environment() -> None:
    target = resolve_server("'/opt/my server/bin/nlm-mcp' --transport stdio", env={"EXTRA": "1"})
    assert target.params is not None
    assert target.params.command == "/opt/my server/bin/nlm-mcp"
    assert target.params.args == ["--transport", "stdio"]
    assert target.params.env is not None and target.params.env["EXTRA"] == "1" and "PATH" in target.params.env
    assert target.label == "the MCP server '/opt/my server/bin/nlm-mcp'"  # what its errors call it


def test_url_and_in_process() -> None:
    http = resolve_server("http://127.0.0.1:8000/mcp")
    assert http.kind == "http" and http.transport(sys.stderr) is not None  # its transport made, nothing sent yet
    assert resolve_server(build_fake_server(FakeNotebookLM())).kind == "in-process"


@pytest.mark.parametrize("spec", ["", "   ", "fake 'unbalanced"])
def test_bad_specs_are_usage_errors(spec: str) -> None:
    with pytest.raises(UsageError, match="--server"):
        resolve_server(spec)


@pytest.mark.anyio
async def test_unreachable_http_server_is_retried_then_reported(sleeps: Any) -> None:
    with anyio.fail_after(60):
        async with connect("http://127.0.0.1:9/mcp", Settings(retry_attempts=2), sleep=sleeps) as client:
            with pytest.raises(ServerUnreachableError) as info:
                await client.server_info()
    assert exit_code_for(info.value) == 4
    assert len(sleeps.delays) == 1
    assert client.connections_opened == 0
    with anyio.fail_after(60):  # the tools' list is a read too: retried as one
        async with connect("http://127.0.0.1:9/mcp", Settings(retry_attempts=2), sleep=sleeps) as client:
            with pytest.raises(ServerUnreachableError):
                await client.tool_input_schemas()
    assert len(sleeps.delays) == 2


@pytest.mark.anyio
async def test_missing_command_is_reported_once_without_retry(tmp_path: Path, sleeps: Any) -> None:
    async with connect(str(tmp_path / "no-such-server"), Settings(), sleep=sleeps) as client:
        with pytest.raises(ServerCommandNotFoundError, match="no-such-server"):
            await client.notebook_list()
    assert sleeps.delays == []


@pytest.mark.anyio
async def test_server_that_dies_at_start_shows_its_last_words(tmp_path: Path, sleeps: Any) -> None:
    script = tmp_path / "dying.py"
    script.write_text("import sys\nsys.stderr.write('fatal: no config here\\n')\nsys.exit(3)\n")
    async with connect(f"{sys.executable} {script}", Settings(retry_attempts=1), sleep=sleeps) as client:
        with anyio.fail_after(60), pytest.raises(ServerUnreachableError, match="fatal: no config here") as info:
            await client.server_info()
    assert info.value.message.startswith(f"cannot connect to the MCP server '{sys.executable}': ")


@pytest.mark.anyio
async def test_a_server_that_writes_no_mcp_on_stdout_is_quoted_in_the_error_not_logged_with_a_traceback(
        tmp_path: Path, sleeps: Any, caplog: pytest.LogCaptureFixture) -> None:
    script = tmp_path / "chatty.py"
    script.write_text("print('Starting server v1.2...')\n")
    async with connect(f"{sys.executable} {script}", Settings(retry_attempts=1), sleep=sleeps) as client:
        with anyio.fail_after(60), pytest.raises(ServerUnreachableError) as info:
            await client.server_info()
    assert "(server said: not an MCP message on stdout: 'Starting server v1.2...')" in str(info.value)
    # the MCP SDK's record of the line, traceback and all, reaches no handler that would print it on stderr
    assert [r for r in caplog.records if r.name.startswith("mcp")] == []


def test_what_the_sdk_logs_of_the_server_is_one_line_in_its_capture_and_goes_no_further() -> None:
    from nlmsync.notebooklm import transports

    def record(message: str, exc: BaseException | None = None) -> logging.LogRecord:
        return logging.LogRecord("mcp.client.stdio", logging.ERROR, __file__, 1, message, None,
                                 (type(exc), exc, None) if exc is not None else None)

    said = transports._ServerSaid()
    assert said.filter(record("outside nlmsync's transports")) is True  # left to logging as usual
    capture = io.StringIO()
    token = transports._SERVER_STDERR.set(capture)
    try:
        assert said.filter(record("MCP server process 12 is still alive\nafter the kill")) is False
        assert said.filter(record("Reading from the MCP server's stdout failed", ConnectionError("reset"))) is False
    finally:
        transports._SERVER_STDERR.reset(token)
    assert capture.getvalue().splitlines() == ["MCP server process 12 is still alive after the kill",
                                               "Reading from the MCP server's stdout failed: reset"]


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def test_a_command_not_on_path_is_found_beside_this_interpreter(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install . notebooklm-mcp-cli` in a virtual environment, then `.venv/bin/nlmsync` run without
    activating it: the server's command is in the venv's bin folder, which is not on PATH."""
    beside = _executable(tmp_path / "venv" / "bin" / "notebooklm-mcp")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    target = resolve_server("notebooklm-mcp --transport stdio", env={"PATH": str(tmp_path / "empty")})
    assert target.params is not None
    assert target.params.command == str(beside) and target.params.args == ["--transport", "stdio"]


def test_a_command_on_path_wins_and_a_path_is_taken_as_written(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    _executable(tmp_path / "venv" / "bin" / "notebooklm-mcp")
    _executable(tmp_path / "path" / "notebooklm-mcp")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "venv" / "bin" / "python"))
    on_path = resolve_server("notebooklm-mcp", env={"PATH": str(tmp_path / "path")})
    written = resolve_server("./notebooklm-mcp", env={"PATH": str(tmp_path / "empty")})
    missing = resolve_server("no-such-server", env={"PATH": str(tmp_path / "empty")})
    assert on_path.params is not None and on_path.params.command == "notebooklm-mcp"
    assert written.params is not None and written.params.command == "./notebooklm-mcp"
    assert missing.params is not None and missing.params.command == "no-such-server"


@pytest.mark.anyio
async def test_the_mcp_sdk_still_keeps_the_low_level_server_where_nlmsync_reads_it() -> None:
    """The in-process transport serves an `MCPServer` through its low-level server, which mcp offers no public
    way to reach: on a release of mcp that moves it, this fails here first."""
    server = MCPServer("probe")

    @server.tool()
    def echo(text: str) -> str:
        """Say `text` back."""
        return text

    low = low_level_server(server)
    assert isinstance(low, Server) and low.name == "probe"
    async with Client(in_process_transport(server)) as client:  # served by `low` alone
        with anyio.fail_after(30):
            assert [tool.name for tool in (await client.list_tools()).tools] == ["echo"]


def test_the_login_a_message_asks_for_is_quoted_for_a_shell() -> None:
    command = login_command()
    assert command.startswith("'") and command.endswith(" login'") and "nlm" in command
