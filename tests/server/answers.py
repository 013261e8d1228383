"""What a client reads from a tool of `nlmsync serve`: the one JSON text of its answer."""

from __future__ import annotations

import json
from typing import Any, cast

from mcp_types import CallToolResult, TextContent


def answer(result: CallToolResult) -> Any:
    """The answer of a call that succeeded, as JSON."""
    assert not result.is_error, result.content
    (block,) = result.content
    assert isinstance(block, TextContent)
    return json.loads(block.text)


def first_text(result: CallToolResult) -> str:
    """The text of a result's first block: what a client shows of an answer or an error, which are one text."""
    return cast(TextContent, result.content[0]).text
