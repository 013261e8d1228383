"""What the real NotebookLM MCP server says, as the fake says it: its in-band errors (`{"status": "error", ...}`,
word for word where nlmsync's error classification reads them), its coercion of list arguments, and the text
`source_get_content` hands back for an upload."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["AUTH_ERROR", "as_list", "deadline_error", "error", "indexed_text", "not_found", "notebook_full",
           "rate_limit_error"]

SMALLEST_PLAN = 50
"""The fewest sources a real plan allows a notebook."""

# What the real server answers every tool while it is not logged in.
AUTH_ERROR = ("No authentication found. Either:\n1. Run 'nlm login' to authenticate via Chrome, or\n"
              "2. Set NOTEBOOKLM_COOKIES environment variable manually")


def error(message: str, **extra: Any) -> dict[str, Any]:
    return {"status": "error", "error": message, **extra}


def notebook_full(notebook_id: str, held: int, capacity: int) -> dict[str, Any]:
    """An add to a notebook holding its `capacity`: NotebookLM refuses it as an invalid argument, with nothing
    that says the notebook is full. A fake told to hold fewer sources than any real plan allows says so in
    words of its own, so that tests of tiny notebooks see a full one for what it is."""
    if capacity < SMALLEST_PLAN:
        return error(f"Source limit reached: notebook {notebook_id} already has {held} sources "
                     f"(maximum {capacity} sources per notebook).")
    return error("Invalid argument", error_details={"category": "validation", "provider_code": 3,
                                                     "retryable": False})


def not_found(kind: str, ident: str) -> dict[str, Any]:
    return error(f"{kind} {ident} not found.", hint=f"Run 'nlm {kind.lower()} list' to see available {kind.lower()}s.")


def as_list(value: str | list[str] | None) -> list[str] | None:
    """The real server's coercion of list arguments: a list, a JSON list string, or comma-separated ids."""
    if value is None or isinstance(value, list):
        return value
    stripped = value.strip()
    if stripped.startswith("["):
        try:
            parsed = json.loads(stripped)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return [str(item) for item in parsed]
    return [part.strip() for part in stripped.split(",") if part.strip()]


def indexed_text(text: str) -> str:
    """What `source_get_content` hands back for an uploaded text. The real server does not return the bytes it
    was sent but NotebookLM's indexed blocks re-joined by a blank line; the fake takes paragraphs as blocks,
    so runs of blank lines and the whitespace around paragraphs differ from the upload, as they do there."""
    blocks = (block.strip() for block in re.split(r"\n[ \t]*\n", text))
    return "\n\n".join(block for block in blocks if block)


def rate_limit_error(tool: str) -> dict[str, Any]:
    """The real server's answer when a usage limit is reached (a query's differs from the other tools')."""
    if tool == "notebook_query":
        return error("NotebookLM temporarily rejected the query because a usage limit was reached.",
                     hint="Wait before retrying the query.",
                     error_details={"category": "resource_exhausted", "provider_code": 8, "retryable": True,
                                    "suggested_action": "retry_after_delay",
                                    "debug_code": "query_resource_exhausted"})
    return error(f"{tool} failed: RPC error code 8 (RESOURCE_EXHAUSTED): rate limit exceeded, retry later.")


def deadline_error() -> dict[str, Any]:
    """The real server's answer when a query outlasts its `timeout` budget."""
    return error("NotebookLM did not respond within the configured query timeout.",
                 hint="Retry with a longer timeout, such as 180 seconds.",
                 error_details={"category": "deadline_exceeded", "retryable": True,
                                "suggested_action": "retry_with_longer_timeout",
                                "debug_code": "query_deadline_exceeded"})
