"""`nlmsync serve` builds its search index as it starts, in the background: a search that comes early waits
for it with MCP progress notifications, and a vault without notes (or no --vault at all) is warned about."""

from __future__ import annotations

import threading
from itertools import pairwise
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.server.answers import answer

import nlmsync.server as server_package
from nlmsync.cli import main
from nlmsync.config import Settings
from nlmsync.search.index import NoteIndex
from nlmsync.server import IndexWarmup, build_server, serving
from nlmsync.store.db import open_database

pytestmark = pytest.mark.anyio


async def test_an_early_search_waits_for_the_index_with_progress(vault: Path) -> None:
    settings = Settings(vault=vault)
    db = open_database(settings.state_path)
    try:
        index = NoteIndex(vault, db, settings)
        warmup = IndexWarmup(index)
        server = build_server(settings, index, warmup=warmup)
        progress: list[tuple[float, float | None, str | None]] = []
        waiting = anyio.Event()
        found: dict[str, Any] = {}

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append((done, total, message))
            waiting.set()

        async with Client(server) as client:
            async def search() -> None:
                found["result"] = await client.call_tool(
                    "search_notes", {"query": "heapsort"},
                    progress_callback=on_progress)  # type: ignore[arg-type]  # names its first argument otherwise

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(search)
                    await waiting.wait()  # the search is waiting for an index not started yet …
                    assert "result" not in found
                    warmup.start()  # … and answers once it is built
        warmup.stop()
    finally:
        db.close()
    result = found["result"]
    assert not result.is_error, result.content
    assert answer(result)["results"][0]["path"] == "algorithms/sorting/heapsort.md"
    assert progress[0] == (0, None, "building the search index: scanning the vault")
    assert progress[-1] == (31, 31, "search index ready")  # 30 notes read, then the index saved
    assert all(earlier[0] < later[0] for earlier, later in pairwise(progress))  # as MCP requires


async def test_serving_builds_the_index_before_any_call(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    started: list[IndexWarmup] = []

    class Recorded(IndexWarmup):
        def start(self) -> None:
            started.append(self)
            super().start()

    monkeypatch.setattr(server_package, "IndexWarmup", Recorded)
    with serving(Settings(vault=vault)):
        assert await anyio.to_thread.run_sync(started[0].finished.wait, 60)
        assert started[0].report is not None and started[0].report.indexed == 26


async def test_a_vault_without_notes_is_warned_about(tmp_path: Path) -> None:
    warned: list[str] = []
    heard = threading.Event()

    def warn(message: str) -> None:
        warned.append(message)
        heard.set()

    empty = tmp_path / "empty"
    empty.mkdir()
    with serving(Settings(vault=empty), warn=warn):
        assert await anyio.to_thread.run_sync(heard.wait, 60)
    assert warned == [f"{empty.resolve()} has no markdown notes: search_notes will find nothing"]


def test_serve_without_vault_warns_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    async def one_search(server: Any) -> None:  # stands in for a client on stdio: one search, then EOF
        async with Client(server) as client:
            await client.call_tool("search_notes", {"query": "anything"})

    monkeypatch.setattr(server_package, "run_stdio", one_search)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NLMSYNC_VAULT", raising=False)
    with pytest.raises(SystemExit) as exited:
        main(["serve"])
        raise SystemExit(0)
    out, err = capsys.readouterr()
    assert (exited.value.code or 0, out) == (0, "")
    assert err.splitlines() == [
        (f"nlmsync: warning: no --vault given: serving the current folder, {tmp_path} (an MCP client starts "
         "nlmsync in a folder of its choosing: give --vault with an absolute path)"),
        f"nlmsync: warning: {tmp_path.resolve()} has no markdown notes: search_notes will find nothing"]
