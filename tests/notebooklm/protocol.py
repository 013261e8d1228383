"""The real server's published tool schemas (`../shared/protocol/`), compared without their prose."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[2]
PROTOCOL_TOOLS = REPO_ROOT.parent / "shared" / "protocol" / "notebooklm-mcp-cli-0.15.8.tools.json"


def without_descriptions(value: Any) -> Any:
    """A JSON schema with every `description` removed (the fake words its descriptions itself)."""
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


def real_input_schemas() -> dict[str, Any]:
    """Tool name → input schema (without descriptions) of the tools nlmsync uses, as the real server lists them."""
    tools = json.loads(PROTOCOL_TOOLS.read_text(encoding="utf-8"))
    return {tool["name"]: without_descriptions(tool["inputSchema"]) for tool in tools}
