"""Terminal output: one JSON document on stdout for --json, rich text otherwise, errors on stderr."""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel
from rich.console import Console

stdout_console = Console(highlight=False, soft_wrap=True)
stderr_console = Console(stderr=True, highlight=False, soft_wrap=True)


def _default(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    return str(obj)


def emit_json(document: Any) -> None:
    """Write exactly one JSON document to stdout."""
    if isinstance(document, BaseModel):
        document = document.model_dump(mode="json")
    sys.stdout.write(json.dumps(document, ensure_ascii=False, default=_default) + "\n")
    sys.stdout.flush()


def json_line(document: Any) -> str:
    """One compact JSON line (for JSON-lines output such as `search --queries`)."""
    if isinstance(document, BaseModel):
        document = document.model_dump(mode="json")
    return json.dumps(document, ensure_ascii=False, default=_default)


def interactive() -> bool:
    """True when progress displays are wanted: stderr is a terminal."""
    return stderr_console.is_terminal
