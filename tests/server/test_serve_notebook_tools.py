"""`ask_notebook` and `refresh_notebook` over an in-process fake NotebookLM server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.server.answers import answer, first_text

from nlmsync.config import Settings
from nlmsync.fake import FakeNotebookLM, build_fake_server
from nlmsync.fake.state import FakeNotebook
from nlmsync.server import serving

pytestmark = pytest.mark.anyio


def _settings(vault: Path) -> Settings:
    return Settings(vault=vault, notebook="new:Serve tests", server="fake")


@asynccontextmanager
async def _client(settings: Settings, fake: FakeNotebookLM) -> AsyncIterator[Client]:
    with serving(settings, notebook_server=build_fake_server(fake)) as server:
        async with Client(server) as client:
            yield client


async def test_refresh_reports_branches_then_reuses(vault: Path) -> None:
    fake = FakeNotebookLM()
    async with _client(_settings(vault), fake) as client:
        first = await client.call_tool("refresh_notebook", {"paths": ["algorithms/sorting/heapsort.md",
                                                                     "cooking/kimchi-jjigae.md"]})
        second = await client.call_tool("refresh_notebook", {"paths": ["algorithms/sorting/heapsort.md"]})
    assert not first.is_error, first.content
    branches = {n["path"]: n["done"] for n in answer(first)["changes"]}
    assert branches == {"algorithms/sorting/heapsort.md": "added", "cooking/kimchi-jjigae.md": "added"}
    assert (answer(second)["counts"], answer(second)["changes"]) == ({"reused": 1}, [])
    [notebook] = fake.notebooks.values()
    assert len(notebook.sources) == 2


async def test_refresh_refuses_paths_outside_or_excluded_before_any_call(vault: Path) -> None:
    fake = FakeNotebookLM()
    async with _client(_settings(vault), fake) as client:
        escaped = await client.call_tool("refresh_notebook", {"paths": ["../../etc/passwd"]})
        private = await client.call_tool("refresh_notebook", {"paths": ["private/diary-secret.md"]})
    assert escaped.is_error and "leaves the vault" in first_text(escaped)
    assert private.is_error and "excluded" in first_text(private)
    assert fake.calls == []


async def test_ask_answers_with_citations_and_continues_the_conversation(vault: Path) -> None:
    fake = FakeNotebookLM()
    async with _client(_settings(vault), fake) as client:
        first = await client.call_tool("ask_notebook", {"question": "How does heapsort build the heap?"})
        assert not first.is_error, first.content
        asked: dict[str, Any] = answer(first)
        follow = await client.call_tool("ask_notebook", {"question": "And its worst case?"})
        fresh = await client.call_tool("ask_notebook", {"question": "Kimchi stew recipe?", "new": True})
    assert asked["answer"] and asked["conversation_id"]
    assert "algorithms/sorting/heapsort.md" in asked["selected_notes"]
    assert any(c["path"] == "algorithms/sorting/heapsort.md" for c in asked["citations"])
    assert answer(follow)["conversation_id"] == asked["conversation_id"]
    assert answer(fresh)["conversation_id"] != asked["conversation_id"]


async def test_concurrent_asks_are_serialized_and_all_succeed(vault: Path) -> None:
    fake = FakeNotebookLM()
    results: list[Any] = []
    async with _client(_settings(vault), fake) as client:

        async def ask(question: str) -> None:
            results.append(await client.call_tool("ask_notebook", {"question": question, "new": True}))

        with anyio.fail_after(120):
            async with anyio.create_task_group() as tg:
                for question in ("heapsort?", "kimchi?", "dijkstra?", "sourdough?"):
                    tg.start_soon(ask, question)
    assert [r.is_error for r in results] == [False] * 4
    # one notebook created, never two: the runs did not interleave
    assert len(fake.notebooks) == 1


async def test_notebook_errors_become_tool_errors_worded_for_the_client(vault: Path) -> None:
    fake = FakeNotebookLM()
    fake.notebooks["nb-1"] = FakeNotebook("nb-1", "Research", created_at=0.0)
    async with _client(Settings(vault=vault, server="fake"), fake) as client:
        result = await client.call_tool("ask_notebook", {"question": "anything"})
    text = first_text(result)
    assert result.is_error and f"no notebook given, and none was used before with the vault {vault}" in text
    # the client cannot pass a command-line option: it is told what the user chooses, and from what
    assert "this server has: nb-1 (Research)" in text and "'nlmsync serve --notebook ID'" in text
    assert "pass one with --notebook" not in text


async def test_ask_on_a_packed_notebook_cites_the_note_inside_the_pack(vault: Path) -> None:
    from nlmsync.app import Orchestrator

    fake = FakeNotebookLM(capacity=5)
    settings = _settings(vault).model_copy(update={"capacity": 5})
    async with Orchestrator.open(settings, server=build_fake_server(fake)) as orch:
        report = await orch.refresh(all_notes=True)
    assert report.packs  # the fixture vault does not fit 5 sources one note each
    async with _client(settings, fake) as client:
        result = await client.call_tool("ask_notebook", {"question": "How does heapsort build the heap?"})
    assert not result.is_error, result.content
    asked = answer(result)
    cited = [c for c in asked["citations"] if c["path"] == "algorithms/sorting/heapsort.md"]
    assert cited and cited[0]["quote"] and cited[0]["heading"]
    [notebook] = fake.notebooks.values()
    assert 1 <= asked["sources_asked"] <= len(notebook.sources)
    assert [c.tool for c in fake.calls if c.tool == "source_add"] == ["source_add"] * len(report.packs)
