"""Terminal output: one JSON document on stdout for --json, rich text otherwise, errors on stderr.

rich and pydantic are imported on first use, not with the module: `search --json` prints without rich,
and `--help` needs neither.
"""

from __future__ import annotations

import functools
import json
import sys
from typing import TYPE_CHECKING, Any

from nlmsync._text import visible

if TYPE_CHECKING:
    from datetime import datetime

    from rich.console import Console


@functools.cache
def stdout_console() -> Console:
    """The rich console for readable output on stdout (made on first use). Emoji codes are left as written: a
    notebook `new:Notes:` or a note `a:memo:b.md` is printed as it is named."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=True, emoji=False)


@functools.cache
def stderr_console() -> Console:
    """The rich console for progress and notes on stderr (made on first use)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True, emoji=False)


def escape(text: str) -> str:
    """`text` with rich markup escaped (`rich.markup.escape`, imported on first use)."""
    from rich.markup import escape

    return escape(text)


def escape_path(text: str) -> str:
    """A file name (or a line naming one) for rich output: control characters shown (`visible`), markup escaped."""
    return escape(visible(text))


def notebook_heading(notebook_id: str, title: str, source_count: int, capacity: int) -> str:
    """The first line `status` and `sources` print: the notebook, its sources against its capacity, the room left
    (or how far over it is, in red)."""
    free = capacity - source_count
    room = f"{free} free" if free >= 0 else f"[red]{-free} over capacity[/red]"
    return f"Notebook {notebook_id} ({escape_path(title)}): {source_count}/{capacity} sources, {room}"


def _is_model(obj: Any) -> bool:
    """A pydantic model? Only when pydantic is imported can there be one: a search that loads no settings
    model (`config.search_settings`) prints its document without importing pydantic."""
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(obj, pydantic.BaseModel)


def _plain(document: Any) -> Any:
    return document.model_dump(mode="json") if _is_model(document) else document


def _default(obj: Any) -> Any:
    if _is_model(obj):
        return obj.model_dump(mode="json")
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    return str(obj)


# The version of every JSON document's layout; raised when a field is renamed, removed or changes meaning.
SCHEMA_VERSION = 1


def _versioned(document: Any) -> Any:
    plain = _plain(document)
    return {"schema_version": SCHEMA_VERSION, **plain} if isinstance(plain, dict) else plain


class _Documents:
    """Whether the command line asked for --json, and whether a document was printed: a command asked for
    --json that stops before printing one prints the error's document instead (`emit_error_json`)."""

    requested = False
    printed = False


def emit_json(document: Any) -> None:
    """Write exactly one JSON document to stdout, `schema_version` first."""
    sys.stdout.write(json.dumps(_versioned(document), ensure_ascii=False, default=_default) + "\n")
    sys.stdout.flush()
    _Documents.printed = True


def json_line(document: Any) -> str:
    """One compact JSON line, `schema_version` first (for JSON-lines output such as `search --queries`)."""
    _Documents.printed = True
    return json.dumps(_versioned(document), ensure_ascii=False, default=_default)


def request_json(args: list[str]) -> None:
    """Note whether `args` ask for --json (an option before any `--`; the words after it are arguments)."""
    options = args[:args.index("--")] if "--" in args else args
    _Documents.requested, _Documents.printed = "--json" in options, False


def emit_error_json(message: str, code: int, hint: str | None) -> None:
    """The document of a command asked for --json that stopped before printing one: `error` (the line said on
    stderr), `exit_code`, `hint` — a script reading stdout gets one JSON document whatever happened."""
    if _Documents.requested and not _Documents.printed:
        emit_json({"error": message, "exit_code": code, "hint": hint})


def when(iso: str | None, *, now: datetime | None = None) -> str:
    """A stored ISO-8601 time for a person: relative on a terminal ("5 min ago"), otherwise ISO to the second in
    local time with its offset — local, as every time nlmsync prints (the allowance's resets in `status` too)."""
    from datetime import UTC, datetime

    if not iso:
        return "never"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if not stdout_console().is_terminal:
        return moment.astimezone().isoformat(timespec="seconds")
    return relative_time(moment, now or datetime.now(UTC))


def relative_time(moment: datetime, now: datetime) -> str:
    """"just now", "12 s ago", "5 min ago", "3 h ago", "2 days ago", then the date (local)."""
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        return moment.astimezone().isoformat(timespec="seconds")
    if seconds < 5:
        return "just now"
    for limit, unit, size in ((60, "s", 1), (3600, "min", 60), (86400, "h", 3600)):
        if seconds < limit:
            return f"{int(seconds // size)} {unit} ago"
    days = int(seconds // 86400)
    if days < 30:
        return f"{days} day{'s' if days > 1 else ''} ago"
    return moment.astimezone().date().isoformat()


def interactive() -> bool:
    """True when progress displays are wanted: stderr is a terminal."""
    return stderr_console().is_terminal
