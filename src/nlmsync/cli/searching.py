"""What `nlmsync search` and `nlmsync index` do: open the index, sync or rank, add snippets, print
(`run_search`, `sync_index`); `cli.search_cmds` declares the commands. The index (numpy when the whole index is
loaded), the state file and rich are imported when a search runs, and `search --json` never imports rich.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from nlmsync._text import visible
from nlmsync.cli._output import emit_json, escape_path, interactive, json_line, stdout_console
from nlmsync.errors import (
    DiskFullError,
    InputError,
    StateCorruptError,
    StateError,
    StateTooNewError,
    UsageError,
)

if TYPE_CHECKING:
    from nlmsync.cli._context import CliContext
    from nlmsync.config import SearchSettings, Settings
    from nlmsync.search import IndexReport, NoteIndex, SearchHit

__all__ = ["open_index", "run_search", "sync_index"]

QUERIES_FILE_LIMIT = 16 << 20
"""Bytes a `--queries` file (or stdin) may hold: some 200,000 questions; more is no list of questions."""


def open_index(settings: Settings | SearchSettings, *, state_optional: bool = False) -> NoteIndex:
    """The note index of the configured vault, cached in the configured state file. With `state_optional` (a
    search), a state file that cannot be made or opened here — a read-only vault, a full disk — is done without:
    the index is built in memory, and a note on stderr says why.

    Raises:
        StateError, DiskFullError, StateLockedError: the state file cannot be used (a damaged or newer one and a
            busy one even with `state_optional`: they are not this machine's circumstances but the file's).
    """
    from nlmsync.search import NoteIndex
    from nlmsync.store.db import open_connection

    try:
        db = open_connection(settings.state_path)
    except (StateError, DiskFullError) as exc:
        if not state_optional or isinstance(exc, (StateCorruptError, StateTooNewError)):
            raise
        sys.stderr.write(f"nlmsync: note: searching without the state file ({visible(str(exc))})\n")
        db = None
    return NoteIndex(settings.vault, db, settings)


def sync_index(index: NoteIndex, label: str, quiet: bool) -> IndexReport:
    """`index.sync()`, showing the notes read as done/total with an ETA on a terminal unless `quiet`."""
    if quiet or not interactive():
        return index.sync()
    from nlmsync.cli._progress import index_progress

    with index_progress(label) as on_progress:
        return index.sync(on_progress=on_progress)


def run_search(cli: CliContext, query: str | None, limit: int, queries: Path | None, json_output: bool) -> None:
    """`nlmsync search`. A first search of a vault that changed shows the notes it reads on a terminal (unless
    `--json` or `-q`); one of an unchanged vault is answered cold (`search.cold`) and shows nothing."""
    if (query is None) == (queries is None):
        raise UsageError("give either a QUERY or --queries FILE")
    settings = cli.search_settings()
    batch = _read_queries(queries) if queries is not None else None
    if query is not None and not query.strip():
        raise UsageError("the query is empty")
    index = open_index(settings, state_optional=True)
    if batch is not None:
        for line in batch:
            sys.stdout.write(json_line(_results(index, settings, line, limit)) + "\n")
        sys.stdout.flush()
    else:
        assert query is not None
        with _progress_when_needed("indexing before the search", json_output or cli.quiet) as on_progress:
            document = _results(index, settings, query, limit, on_progress)
        if json_output:
            emit_json(document)
        else:
            _print_results(document)
    _close(index)
    cli.exit_at_once = True


@contextmanager
def _progress_when_needed(label: str, quiet: bool) -> Iterator[Callable[[int, int], None] | None]:
    """A callback for `NoteIndex.search(on_progress=…)` that starts `index_progress(label)` when the index
    first reports notes to read; None when `quiet` or not on a terminal. (A search answered cold, or of a vault
    with nothing to read, draws nothing.)"""
    if quiet or not interactive():
        yield None
        return
    with ExitStack() as stack:
        display: Callable[[int, int], None] | None = None

        def on_progress(done: int, total: int) -> None:
            nonlocal display
            if display is None:
                if not total:
                    return
                from nlmsync.cli._progress import index_progress

                display = stack.enter_context(index_progress(label))
            display(done, total)

        yield on_progress


def _snippet(index: NoteIndex, settings: Settings | SearchSettings, path: str, query: str) -> str:
    from nlmsync.reading import extract_snippet
    from nlmsync.vault import is_note_path, read_note_text, resolve_in_vault

    try:
        if is_note_path(path):
            text = read_note_text(settings.vault, path)
        else:  # an attachment: the text the index read of it
            from nlmsync.store.document_texts import read_attachment

            text = read_attachment(index.db, resolve_in_vault(settings.vault, path), path).text
    except (InputError, OSError):
        return ""
    return extract_snippet(text, query, max_length=settings.snippet_length)


def _results(index: NoteIndex, settings: Settings | SearchSettings, query: str, limit: int,
             on_progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    selection = index.selection(query, on_progress=on_progress, limit=limit)
    chosen = {hit.path for hit in selection.chosen}
    return {"query": query, "selected_count": len(chosen), "weak_match": selection.weak,
            "language": selection.language or None,
            "results": [_hit_dict(hit, query, hit.path in chosen, _snippet(index, settings, hit.path, query))
                        for hit in selection.hits[:limit]]}


def _hit_dict(hit: SearchHit, query: str, selected: bool, snippet: str) -> dict[str, Any]:
    from nlmsync.search import matched_words

    return {"path": hit.path, "score": round(hit.score, 6), "matched_terms": matched_words(query, hit.matched_terms),
            "selected": selected, "snippet": snippet}


def _read_queries(path: Path) -> list[str]:
    from nlmsync.vault import read_input_file

    try:
        raw = _read_stdin(QUERIES_FILE_LIMIT) if str(path) == "-" else read_input_file(path, QUERIES_FILE_LIMIT)
    except FileNotFoundError:
        raise InputError(f"{path}: queries file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read queries file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: queries file is not valid UTF-8 (byte {exc.start})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


def _read_stdin(limit: int) -> bytes:
    """What stdin holds, at most `limit` bytes (`/dev/zero` piped in is refused after them, not read for ever).

    Raises:
        OSError: stdin holds more than `limit` bytes, or cannot be read.
    """
    raw = sys.stdin.buffer.read(limit + 1)
    if len(raw) > limit:
        raise OSError(errno.EFBIG, f"larger than {limit:,} bytes")
    return raw


def _close(index: NoteIndex) -> None:
    """Close the index's state file (what any writes left in its log is checkpointed into the file)."""
    if index.db is not None:
        index.db.close()


def _print_results(document: dict[str, Any]) -> None:
    out = stdout_console()
    results = document["results"]
    if not results:
        out.print(f"No notes match {escape_path(repr(document['query']))}.")
        return
    width = len(str(len(results)))
    for rank, hit in enumerate(results, start=1):
        mark = "[bold green]✓[/]" if hit["selected"] else " "
        terms = ", ".join(hit["matched_terms"])
        out.print(f"{rank:>{width}}. {mark} [bold]{escape_path(hit['path'])}[/]  "
                  f"[cyan]{hit['score']:.3f}[/]  [dim]{escape_path(terms)}[/]")
        if hit["snippet"]:
            out.print("   " + " " * width + escape_path(" ".join(hit["snippet"].split())), style="dim")
    if document["weak_match"]:
        out.print(f"[dim]Nothing in the vault matches {escape_path(repr(document['query']))} well: nothing is selected "
                  "(ask sends the question to the notebook as it is).[/]")
        return
    out.print(f"[dim]✓ = selected for NotebookLM: {document['selected_count']} selected, {len(results)} shown[/]")
