"""What a client reads from a tool of `nlmsync serve`: the one JSON text of its answer; and how a test starts
`nlmsync serve` as a client does, over stdio."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

from mcp import StdioServerParameters
from mcp_types import CallToolResult, TextContent
from tests.cli_helpers import environment_without_settings


def serve_over_stdio(vault: Path, *extra: str) -> StdioServerParameters:
    """`python -m nlmsync --vault VAULT EXTRA… serve`, with no nlmsync setting from this process's environment."""
    return StdioServerParameters(command=sys.executable, args=["-m", "nlmsync", "--vault", str(vault), *extra, "serve"],
                                 env=environment_without_settings())


def answer(result: CallToolResult) -> Any:
    """The answer of a call that succeeded, as JSON."""
    assert not result.is_error, result.content
    (block,) = result.content
    assert isinstance(block, TextContent)
    return json.loads(block.text)


def first_text(result: CallToolResult) -> str:
    """The text of a result's first block: what a client shows of an answer or an error, which are one text."""
    return cast(TextContent, result.content[0]).text
