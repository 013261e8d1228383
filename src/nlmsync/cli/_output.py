"""Terminal output: one JSON document on stdout for --json, rich text otherwise, errors on stderr.

rich and pydantic are imported on first use, not with the module: `search --json` prints without rich,
and `--help` needs neither.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


@functools.cache
def stdout_console() -> Console:
    """The rich console for readable output on stdout (made on first use)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True)


@functools.cache
def stderr_console() -> Console:
    """The rich console for progress and notes on stderr (made on first use)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def escape(text: str) -> str:
    """`text` with rich markup escaped (`rich.markup.escape`, imported on first use)."""
    from rich.markup import escape

    return escape(text)


# C0/C1 controls, line and paragraph separators, bidirectional overrides: what lets a file name move the
# cursor, recolour, reorder or split the lines of a terminal
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with its control characters written as escapes (`\\n`, `\\x1b`, `\\u202e`), for output a
    person reads; JSON output escapes them itself."""
    if text.isprintable():
        return text
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def escape_path(text: str) -> str:
    """A file name (or a line naming one) for rich output: control characters shown (`visible`), markup escaped."""
    return escape(visible(text))


def _plain(document: Any) -> Any:
    # imported here, not with the module (--help needs no pydantic); every command that prints has
    # loaded its settings, so pydantic is imported already then
    from pydantic import BaseModel

    return document.model_dump(mode="json") if isinstance(document, BaseModel) else document


def _default(obj: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    return str(obj)


def emit_json(document: Any) -> None:
    """Write exactly one JSON document to stdout."""
    sys.stdout.write(json.dumps(_plain(document), ensure_ascii=False, default=_default) + "\n")
    sys.stdout.flush()


def json_line(document: Any) -> str:
    """One compact JSON line (for JSON-lines output such as `search --queries`)."""
    return json.dumps(_plain(document), ensure_ascii=False, default=_default)


def interactive() -> bool:
    """True when progress displays are wanted: stderr is a terminal."""
    return stderr_console().is_terminal
