"""`serve --transport http`: loopback by default, bearer token enforced, refusal off loopback without one."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.cli_helpers import environment_without_settings
from tests.server.answers import answer

from nlmsync.cli import main
from nlmsync.config import Settings
from nlmsync.errors import ConfigError
from nlmsync.server import check_bind, run_http, serving
from nlmsync.server._http import is_loopback

TOKEN = "s3cret-token"


def _listening_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@pytest.mark.parametrize(("host", "loopback"), [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True), ("127.0.0.2", True),
    ("0.0.0.0", False), ("192.168.1.5", False), ("example.org", False),
])
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_binding_elsewhere_needs_a_token() -> None:
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(ConfigError, match="needs a bearer token"):
        check_bind("0.0.0.0", None)


def test_cli_refuses_to_listen_off_loopback_without_a_token(vault: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(vault), "serve", "--transport", "http", "--host", "0.0.0.0", "--port", "0"])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.startswith("nlmsync: error: serve: binding to 0.0.0.0 needs a bearer token")
    assert "Traceback" not in err


@pytest.mark.anyio
async def test_token_is_required_and_accepted_over_http(vault: Path) -> None:
    with _listening_socket() as sock, serving(Settings(vault=vault)) as server:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_http(server, "127.0.0.1", 0, TOKEN, sock=sock))
                async with httpx2.AsyncClient() as raw:
                    missing = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
                    wrong = await raw.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                           headers={"Authorization": "Bearer nope"})
                async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as authed, \
                        Client(streamable_http_client(url, http_client=authed)) as client:
                    found = await client.call_tool("search_notes", {"query": "dijkstra", "limit": 1})
                tg.cancel_scope.cancel()
    assert missing.status_code == wrong.status_code == 401
    assert missing.headers["www-authenticate"] == "Bearer"
    assert answer(found)["results"][0]["path"] == "algorithms/graphs/dijkstra.md"


@pytest.mark.parametrize(("flags", "field"), [
    (["--transport", "bogus"], "--transport"), (["--port", "70000"], "--port"), (["--port", "many"], "--port"),
])
def test_bad_serve_flags_are_usage_errors(vault: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
                                          field: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(vault), "serve", *flags])
    err = capsys.readouterr().err
    assert exited.value.code == 2
    assert err.startswith(f"nlmsync: error: {field}: ") and "unexpected" not in err


# `python -m nlmsync` with its open-files limit (`ulimit -n`) lowered to the number given first
_WITH_FILE_LIMIT = ("import resource, runpy, sys; soft = int(sys.argv.pop(1)); "
                    "resource.setrlimit(resource.RLIMIT_NOFILE, (soft, resource.getrlimit(resource.RLIMIT_NOFILE)[1])); "
                    "runpy.run_module('nlmsync', run_name='__main__', alter_sys=True)")


def _serve_http(vault: Path, *flags: str, file_limit: int | None = None) -> subprocess.Popen[str]:
    env = environment_without_settings()
    start = ["-m", "nlmsync"] if file_limit is None else ["-c", _WITH_FILE_LIMIT, str(file_limit)]
    return subprocess.Popen([sys.executable, *start, "--vault", str(vault), "serve", "--transport", "http", *flags],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            env=env)


@asynccontextmanager
async def _http_server(vault: Path, file_limit: int | None = None) -> AsyncIterator[tuple[subprocess.Popen[str], str]]:
    """`serve --transport http --port 0` in a child process, and the URL it printed; killed on leaving."""
    process = _serve_http(vault, "--port", "0", file_limit=file_limit)
    try:
        assert process.stdout is not None
        with anyio.fail_after(60):
            url = (await anyio.to_thread.run_sync(process.stdout.readline)).strip()
        yield process, url
    finally:
        process.kill()
        process.wait(timeout=60)


async def _search_then_stop(process: subprocess.Popen[str], url: str) -> tuple[str, str]:
    """A search the server must answer, then SIGTERM; what the process wrote (stdout, stderr)."""
    with anyio.fail_after(60):
        async with Client(url) as client:
            found = await client.call_tool("search_notes", {"query": "dijkstra", "limit": 1})
    assert answer(found)["results"][0]["path"] == "algorithms/graphs/dijkstra.md"
    process.send_signal(signal.SIGTERM)
    return process.communicate(timeout=60)


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_port_0_prints_the_url_and_sigterm_stops_cleanly(vault: Path) -> None:
    async with _http_server(vault) as (process, url):
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp") and not url.endswith(":0/mcp")
        out, err = await _search_then_stop(process, url)
    assert process.returncode == 0, err
    assert out == "" and "Traceback" not in err
    # SQLite removes the write-ahead log when the last connection closes: nothing left half-open
    assert not (vault / ".nlmsync" / "state.db-wal").exists()


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_a_port_in_use_is_one_line_and_exit_2(vault: Path) -> None:
    with _listening_socket() as taken:
        port = taken.getsockname()[1]
        process = _serve_http(vault, "--port", str(port))
        out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and out == ""
    assert err.startswith(f"nlmsync: error: --host/--port: cannot listen on 127.0.0.1:{port} (")
    assert err.count("\n") == 1


def _connect_idle(url: str, count: int) -> list[socket.socket]:
    host, port = url.split("//")[1].split("/")[0].split(":")
    return [socket.create_connection((host, int(port)), timeout=30) for _ in range(count)]


def _closed_by_the_server(sock: socket.socket) -> bool:
    """Whether the server closed (or reset) `sock`: waits for it as long as the socket's timeout."""
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.anyio
async def test_a_server_out_of_file_descriptors_drops_connections_and_keeps_serving(vault: Path) -> None:
    """300 idle connections, none authenticated, against a server that may open 256 files: it holds what it can,
    drops the rest, and answers once they are gone — it does not die, nor does its logging."""
    async with _http_server(vault, file_limit=256) as (process, url):
        with anyio.fail_after(120):
            idle = await anyio.to_thread.run_sync(lambda: _connect_idle(url, 300))
            for sock in idle:
                sock.settimeout(0.2)
            dropped = await anyio.to_thread.run_sync(lambda: sum(_closed_by_the_server(s) for s in idle))
            assert process.poll() is None
            assert 100 <= dropped < 300  # the bound held what the descriptors allow, the rest were let go
            for sock in idle:
                sock.close()
        _, err = await _search_then_stop(process, url)  # once the pressure is off, it serves as before
    assert process.returncode == 0, err
    assert "Traceback" not in err and "Too many open files" not in err


@pytest.mark.slow  # a server over HTTP, and connections left to time out
@pytest.mark.anyio
async def test_idle_and_trickling_connections_are_closed_and_the_bound_holds(vault: Path) -> None:
    with _listening_socket() as sock, serving(Settings(vault=vault)) as server:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: run_http(server, "127.0.0.1", 0, None, sock=sock, connections=2,
                                               request_timeout=5))
                idle, trickling = await anyio.to_thread.run_sync(lambda: _connect_idle(url, 2))
                trickling.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and then nothing more
                (beyond,) = await anyio.to_thread.run_sync(lambda: _connect_idle(url, 1))
                idle.settimeout(30)
                assert await anyio.to_thread.run_sync(_closed_by_the_server, idle)  # made room for the third
                for held in (trickling, beyond):
                    held.setblocking(False)
                    with pytest.raises(BlockingIOError):
                        held.recv(1)  # the two within the bound are still held
                for held in (trickling, beyond):
                    held.settimeout(30)
                    assert await anyio.to_thread.run_sync(_closed_by_the_server, held)  # after the timeout
                    held.close()
                idle.close()
                async with Client(url) as client:
                    found = await client.call_tool("search_notes", {"query": "dijkstra", "limit": 1})
                tg.cancel_scope.cancel()
    assert answer(found)["results"][0]["path"] == "algorithms/graphs/dijkstra.md"


@pytest.mark.anyio
async def test_a_client_is_served_at_once_while_idle_connections_fill_the_bound(vault: Path) -> None:
    """Idle connections that never send a request make room for one that does: the client is served long
    before they would time out, and the oldest idle ones are let go first."""
    with _listening_socket() as sock, serving(Settings(vault=vault)) as server:
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: run_http(server, "127.0.0.1", 0, None, sock=sock, connections=4,
                                           request_timeout=600))
            flood = await anyio.to_thread.run_sync(lambda: _connect_idle(url, 8))  # the last 4 are held
            with anyio.fail_after(60):  # far less than the 600 s the held ones may wait for a request
                for sock_ in flood[:4]:
                    sock_.settimeout(30)
                    assert await anyio.to_thread.run_sync(_closed_by_the_server, sock_)
                async with Client(url) as client:
                    found = await client.call_tool("search_notes", {"query": "dijkstra", "limit": 1})
            for sock_ in flood:
                sock_.close()
            tg.cancel_scope.cancel()
    assert answer(found)["results"][0]["path"] == "algorithms/graphs/dijkstra.md"
