"""The fake's MCP server refuses what the real server refuses before a tool runs."""

from __future__ import annotations

import anyio
import pytest
from mcp import Client
from mcp_types import TextContent

from nlmsync.fake import FakeNotebookLM, build_fake_server


@pytest.mark.anyio
async def test_a_call_with_an_argument_its_tool_does_not_take_is_refused_and_not_applied(fake: FakeNotebookLM) -> None:
    """Its schemas say `additionalProperties: false`, as the real server's do, and the call is refused as theirs
    is: a misspelt argument never runs the tool without it."""
    async with Client(build_fake_server(fake)) as client:
        with anyio.fail_after(30):
            refused = await client.call_tool("notebook_create", {"title": "N", "titel": "M", "colour": "red"})
            taken = await client.call_tool("notebook_create", {"title": "N"})
    assert refused.is_error and not taken.is_error
    assert isinstance(refused.content[0], TextContent)
    lines = refused.content[0].text.splitlines()
    assert lines[0] == "Error executing tool notebook_create: 2 validation errors for notebook_createArguments"
    named = [line for line in lines[1:] if not line.startswith(" ")]
    assert named == ["titel", "colour"] and refused.content[0].text.count("Extra inputs are not permitted") == 2
    assert [nb.title for nb in fake.notebooks.values()] == ["N"]  # the refused call created nothing
    assert [call.tool for call in fake.calls] == ["notebook_create"]
