"""One contract suite, run against the fake in-process, as a stdio subprocess and over streamable HTTP.

The same client code and the same assertions for every transport: the fake behaves the same wherever it
runs. The fake's published input schemas are checked against the ones the installed real server lists
(`notebooklm-mcp-cli`, pinned by the test extra; its version is named in every failure and in pytest's header).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.notebooklm.protocol import USED_TOOLS, RealTools, without_descriptions

from nlmsync.config import Settings
from nlmsync.errors import NotFoundError, ServerCapacityError, ServerValidationError, exit_code_for
from nlmsync.fake import FakeNotebookLM, build_fake_server, serve_in_process
from nlmsync.notebooklm import connect

CAPACITY = 3


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.real_server
@pytest.mark.anyio
async def test_fake_input_schemas_equal_the_real_ones(real_tools: RealTools) -> None:
    async with Client(build_fake_server(FakeNotebookLM())) as client:
        listed = {tool.name: without_descriptions(tool.input_schema) for tool in (await client.list_tools()).tools}
    assert set(listed) == USED_TOOLS
    missing = sorted(USED_TOOLS - set(real_tools.schemas))
    assert missing == [], f"not listed by {real_tools.compared}"
    for name, schema in listed.items():
        assert schema == real_tools.schemas[name], f"{name}: the fake's input schema differs from {real_tools.compared}"
        assert schema["additionalProperties"] is False


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
@pytest.mark.real_server
def test_the_docs_say_how_many_of_the_real_tools_the_fake_has(real_tools: RealTools) -> None:
    docs = " ".join((Path(__file__).resolve().parents[2] / "docs" / "ci.md").read_text(encoding="utf-8").split())
    claim = (f"It has the {len(USED_TOOLS)} tools of the real `notebooklm-mcp` that nlmsync uses "
             f"(of the real server's {len(real_tools.schemas)})")
    assert claim in docs, f"docs/ci.md does not say: {claim}"


@pytest.fixture(params=["in-process", "fake", pytest.param("stdio", marks=pytest.mark.slow),
                        pytest.param("http", marks=pytest.mark.slow)])
def server_spec(request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if request.param == "in-process":
        return build_fake_server(FakeNotebookLM(capacity=CAPACITY))
    if request.param == "fake":
        return f"fake --capacity {CAPACITY}"
    if request.param == "stdio":
        return f"fake-stdio --capacity {CAPACITY}"
    return request.getfixturevalue("spawn_http_fake")("--capacity", str(CAPACITY))


@pytest.mark.anyio
async def test_contract(server_spec: Any, tmp_path: Path) -> None:
    async with connect(server_spec, Settings(), state_dir=tmp_path, in_process_fake=serve_in_process) as client:
        with anyio.fail_after(60):
            info = await client.server_info()
            assert info.version and info.auth_status == "configured"
            usage = await client.usage()
            assert usage is not None and [w.window for w in usage.windows] == ["rolling", "weekly"]
            assert usage.spent_window() is None and usage.plan.capacity == 50
            assert (await client.refresh_auth()).message

            created = await client.notebook_create("Algorithms")
            assert created.title == "Algorithms"
            nb = created.notebook_id
            assert nb in [n.id for n in (await client.notebook_list()).notebooks]

            heap = await client.source_add_text(nb, "Heapsort builds a binary heap.\n\nIt sorts in place.",
                                                "notes/heap.md · 0a1b")
            quick = await client.source_add_text(nb, "Quicksort partitions around a pivot.", "notes/quick.md · 2c3d")
            details = await client.notebook_get(nb)
            assert {(s.id, s.title) for s in details.sources} == {(heap.source_id, heap.title),
                                                                  (quick.source_id, quick.title)}
            assert details.notebook.source_count == 2

            content = await client.source_get_content(heap.source_id)
            assert content.content.startswith("Heapsort") and content.char_count == len(content.content)
            renamed = await client.source_rename(nb, quick.source_id, "notes/quicksort.md · 2c3d")
            assert renamed.title == "notes/quicksort.md · 2c3d"

            answer = await client.notebook_query(nb, "how does heapsort work?", source_ids=[heap.source_id])
            assert answer.sources_used == [heap.source_id]
            assert answer.references[0].cited_text == "Heapsort builds a binary heap."
            assert answer.citations == {"1": heap.source_id}
            follow = await client.notebook_query(nb, "and quicksort?", conversation_id=answer.conversation_id)
            assert follow.conversation_id == answer.conversation_id
            with pytest.raises(NotFoundError):
                await client.notebook_query(nb, "x", conversation_id="no-such-conversation")

            with pytest.raises(ServerValidationError):
                await client.call("notebook_get", {"notebook_id": nb, "unknown_argument": 1})

            await client.source_add_text(nb, "third", "c")
            with pytest.raises(ServerCapacityError) as full:
                await client.source_add_text(nb, "fourth", "d")
            assert exit_code_for(full.value) == 3

            await client.source_delete(heap.source_id)
            assert heap.source_id not in [s.id for s in (await client.notebook_get(nb)).sources]
            with pytest.raises(NotFoundError):
                await client.source_delete(heap.source_id)
            with pytest.raises(NotFoundError):
                await client.notebook_get("no-such-notebook")
