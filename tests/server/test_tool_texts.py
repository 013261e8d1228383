"""What an LLM client pays for: `tools/list` and the answers of `nlmsync serve` are short, in the user's words,
and say each thing once."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.server.answers import serve_over_stdio

from nlmsync.config import Settings
from nlmsync.server import serving

pytestmark = pytest.mark.anyio

TOOLS_LIST_BUDGET = 5_000  # bytes of the tools/list answer as JSON
DEVELOPER_WORDS = re.compile(r"§|`[a-z_]+\.[A-Za-z_]+`|SearchHit|Decision|\bBM25\b|registry|selection rule")


def _wire(value: Any) -> int:
    return len(json.dumps(value.model_dump(by_alias=True, exclude_none=True, mode="json"), separators=(",", ":"),
                          ensure_ascii=False).encode())


def _texts(schema: Any) -> list[str]:
    """Every description in a JSON schema."""
    if isinstance(schema, dict):
        own = schema.get("description")
        return ([own] if isinstance(own, str) else []) + [t for v in schema.values() for t in _texts(v)]
    return [t for v in schema for t in _texts(v)] if isinstance(schema, list) else []


async def test_tools_are_described_briefly_in_the_users_words(vault: Path) -> None:
    with serving(Settings(vault=vault)) as server:
        async with Client(server) as client:
            listed = await client.list_tools()
    assert _wire(listed) <= TOOLS_LIST_BUDGET
    for tool in listed.tools:
        assert tool.output_schema is None, f"{tool.name}: the answer is described in its description"
        for text in [tool.description or "", *_texts(tool.input_schema)]:
            assert not DEVELOPER_WORDS.search(text), f"{tool.name}: {text}"


async def test_a_search_answer_is_one_compact_json_text_saying_each_thing_once(vault: Path) -> None:
    with serving(Settings(vault=vault)) as server:
        async with Client(server) as client:
            found = await client.call_tool("search_notes", {"query": "how does heapsort work"})
    assert found.structured_content is None
    (block,) = found.content
    text = block.text  # type: ignore[union-attr]
    answer = json.loads(text)
    assert text == json.dumps(answer, separators=(",", ":"), ensure_ascii=False)  # no indentation
    assert answer["results"][0]["path"] == "algorithms/sorting/heapsort.md"
    assert "null" not in text
    for hit in answer["results"]:
        snippets = [chunk["snippet"] for chunk in hit["chunks"]]
        assert "snippet" not in hit and len(set(snippets)) == len(snippets)


# What a client may assume of each tool: reading the vault changes nothing and reaches nothing outside it; the
# notebook tools reach NotebookLM and may delete sources (an old version, a note evicted to make room).
EXPECTED_HINTS = {
    "search_notes": {"readOnlyHint": True, "openWorldHint": False},
    "read_note": {"readOnlyHint": True, "openWorldHint": False},
    "get_chunk": {"readOnlyHint": True, "openWorldHint": False},
    "ask_notebook": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False, "openWorldHint": True},
    "refresh_notebook": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                         "openWorldHint": True},
}


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
async def test_every_parameter_is_described_and_every_tool_annotated_over_stdio(vault: Path) -> None:
    with anyio.fail_after(120):
        async with Client(serve_over_stdio(vault)) as client:
            listed = await client.list_tools()
    hints = {tool.name: tool.annotations.model_dump(by_alias=True, exclude_none=True, exclude={"title"})
             for tool in listed.tools if tool.annotations is not None}
    assert hints == EXPECTED_HINTS
    undescribed = [f"{tool.name}.{name}" for tool in listed.tools
                   for name, schema in tool.input_schema["properties"].items() if not schema.get("description")]
    assert undescribed == []
    assert _wire(listed) <= TOOLS_LIST_BUDGET
