"""`nlmsync --vault … serve` as a real stdio subprocess, the way an MCP client starts it (and, in-process, its
refusal to start on a missing vault)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from tests.cli_helpers import environment_without_settings, fake_state
from tests.server.answers import answer, first_text, serve_over_stdio

from nlmsync.cli import main

pytestmark = pytest.mark.anyio


def _documented_registration(vault: Path) -> StdioServerParameters:
    """The client configuration docs/mcp-clients.md gives, pointed at this venv's `nlmsync` and the test vault."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "mcp-clients.md").read_text(encoding="utf-8")
    block = page.split("```json\n", 1)[1].split("```", 1)[0]
    entry = json.loads(block)["mcpServers"]["nlmsync"]
    assert entry["command"] == "/path/to/.venv/bin/nlmsync" and "/path/to/vault" in entry["args"]
    args = [str(vault) if a == "/path/to/vault" else a for a in entry["args"]]
    env = environment_without_settings()
    return StdioServerParameters(command=str(Path(sys.executable).with_name("nlmsync")), args=args, env=env)


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
async def test_every_vault_tool_over_stdio_as_the_docs_register_it(vault: Path) -> None:
    with anyio.fail_after(120):
        async with Client(_documented_registration(vault)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            found = await client.call_tool("search_notes", {"query": "kimchi stew", "limit": 2})
            read = await client.call_tool("read_note", {"path": "cooking/kimchi-jjigae.md"})
            chunk = await client.call_tool("get_chunk", {"chunk_id": "cooking/kimchi-jjigae.md:0"})
            escaped = await client.call_tool("read_note", {"path": "../../../etc/passwd"})
            excluded = await client.call_tool("get_chunk", {"chunk_id": "private/diary-secret.md:0"})
            invalid = await client.call_tool("search_notes", {"query": "x", "limit": "many"})
    assert names == {"search_notes", "read_note", "get_chunk", "ask_notebook", "refresh_notebook"}
    assert answer(found)["results"][0]["path"] == "cooking/kimchi-jjigae.md"
    assert answer(read)["content"] == (vault / "cooking/kimchi-jjigae.md").read_text(encoding="utf-8")
    assert answer(chunk)["chunks"][0]["chunk_id"] == "cooking/kimchi-jjigae.md:0"
    assert escaped.is_error and "leaves the vault" in first_text(escaped)
    assert excluded.is_error and "excluded" in first_text(excluded)
    assert invalid.is_error and "limit" in first_text(invalid)


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
async def test_ask_over_stdio_with_the_bundled_fake_server(vault: Path) -> None:
    with anyio.fail_after(120):
        async with Client(serve_over_stdio(vault, "--server", "fake", "--notebook", "new:Stdio")) as client:
            refreshed = await client.call_tool("refresh_notebook", {"query": "heapsort"})
            asked = await client.call_tool("ask_notebook", {"question": "What is heapsort's worst case?"})
    assert not refreshed.is_error, refreshed.content
    assert "algorithms/sorting/heapsort.md" in [n["path"] for n in answer(refreshed)["changes"]]
    assert not asked.is_error, asked.content
    assert answer(asked)["answer"]
    assert fake_state(vault).is_file()


PASSAGE_QUERIES = ["heapsort sift down", "kimchi stew", "dead letter queue replay", "certificate runbook",
                   "sourdough starter", "window functions", "quicksort pivot", "event loop", "git rebase", "entropy"]


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
async def test_every_passage_of_search_notes_lies_in_the_chunk_its_id_names(vault: Path) -> None:
    """Notes cut into overlapping windows of 40 words (most fixture notes then have several chunks) and the
    transcript's time windows: a client that follows a passage up with `get_chunk` of its id reads its text."""
    params = _documented_registration(vault)
    params.env = {**(params.env or {}), "NLMSYNC_CHUNK_MAX_TOKENS": "40", "NLMSYNC_CHUNK_OVERLAP_TOKENS": "10"}
    passages: list[tuple[str, int, int]] = []
    fetched: dict[str, tuple[int, int]] = {}
    with anyio.fail_after(120):
        async with Client(params) as client:
            for query in PASSAGE_QUERIES:
                found = answer(await client.call_tool("search_notes", {"query": query, "limit": 5}))
                passages += [(c["chunk_id"], c["char_offset_start"], c["char_offset_end"])
                             for note in found["results"] for c in note["chunks"]]
            for chunk_id in dict.fromkeys(chunk_id for chunk_id, _start, _end in passages):
                [chunk] = answer(await client.call_tool("get_chunk", {"chunk_id": chunk_id}))["chunks"]
                fetched[chunk_id] = (chunk["char_offset_start"], chunk["char_offset_end"])
    assert len(passages) > 30 and any(not chunk_id.endswith(":0") for chunk_id, _s, _e in passages)
    outside = [(chunk_id, start, end, fetched[chunk_id]) for chunk_id, start, end in passages
               if not fetched[chunk_id][0] <= start < end <= fetched[chunk_id][1]]
    assert outside == []


# The options the MCP Inspector's launcher reads itself wherever they stand before `--` (its `--server` and
# `--config` name an entry of its own config file), and those of its CLI client; the rest is the server's command.
INSPECTOR_VALUE_OPTIONS = {"-e", "--config", "--server", "--transport", "--server-url", "--header", "--method"}
INSPECTOR_FLAGS = {"--cli", "--web", "--tui"}


def _as_the_inspector_starts_it(vault: Path) -> StdioServerParameters:
    """The Inspector command of docs/mcp-clients.md, split as the Inspector splits it: its own options out,
    `-e NAME=VALUE` into the server's environment, the rest the server's command (`~/notes` the test vault)."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "mcp-clients.md").read_text(encoding="utf-8")
    # `-y`: npx fetches the Inspector without asking, which it cannot do off a terminal
    (line,) = [line for line in page.splitlines() if line.startswith("npx -y @modelcontextprotocol/inspector ")]
    words = shlex.split(line)[3:]
    env, command, own = environment_without_settings(), [], []
    while words:
        word = words.pop(0)
        if word in INSPECTOR_VALUE_OPTIONS:
            value = words.pop(0)
            own.append(word)
            if word == "-e":
                name, _, env[name] = value.partition("=")
        elif word in INSPECTOR_FLAGS:
            own.append(word)
        else:
            command.append(str(vault) if word == "~/notes" else word)
    assert "--server" not in own and "--config" not in own, "the Inspector would take these as its own"
    assert command[0] == "nlmsync" and command[-1] == "serve"
    return StdioServerParameters(command=str(Path(sys.executable).with_name("nlmsync")), args=command[1:], env=env)


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
async def test_the_inspector_command_of_the_docs_gives_serve_its_settings_through_the_environment(
        vault: Path) -> None:
    with anyio.fail_after(120):
        async with Client(_as_the_inspector_starts_it(vault)) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            asked = await client.call_tool("ask_notebook", {"question": "How does heapsort work?"})
    assert names == {"search_notes", "read_note", "get_chunk", "ask_notebook", "refresh_notebook"}
    assert not asked.is_error, asked.content  # answered by the fake server NLMSYNC_SERVER named, offline
    assert fake_state(vault).is_file()


def test_serve_on_a_missing_vault_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process: the error comes before anything is served, so no process boundary is involved."""
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(tmp_path / "nope"), "serve"])
    out, err = capsys.readouterr()
    assert exited.value.code == 2 and out == ""
    assert err.startswith("nlmsync: error: ") and "nope" in err and err.count("\n") == 1


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_sigterm_stops_a_stdio_server_whose_client_keeps_stdin_open(vault: Path) -> None:
    env = environment_without_settings()
    process = subprocess.Popen([sys.executable, "-m", "nlmsync", "--vault", str(vault), "serve"], env=env, text=True,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == 1  # serving, and blocked reading stdin
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    finally:
        process.kill()
        process.communicate(timeout=30)
    assert process.returncode == -signal.SIGTERM
