"""`nlmsync index` and `nlmsync search`: build the BM25 index and query it from the command line.

The index (numpy), the state file and rich are imported when a command runs, not with the module, so
that `--help` and the other commands do not pay for them; `search --json` never imports rich.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from nlmsync.cli._app import JsonFlag, app, cli_context, examples
from nlmsync.cli._output import emit_json, escape_path, interactive, json_line, stdout_console
from nlmsync.errors import InputError, UsageError

if TYPE_CHECKING:
    from nlmsync.config import SearchSettings, Settings
    from nlmsync.search import IndexReport, NoteIndex, SearchHit



def open_index(settings: Settings | SearchSettings) -> NoteIndex:
    """The note index of the configured vault, cached in the configured state file."""
    from nlmsync.search import NoteIndex
    from nlmsync.store.db import open_connection

    if not settings.vault.is_dir():
        raise InputError(f"{settings.vault}: vault folder does not exist or is not a directory")
    return NoteIndex(settings.vault, open_connection(settings.state_path), settings)


def _sync_index(index: NoteIndex, label: str, quiet: bool) -> IndexReport:
    """`index.sync()`, showing the notes read as done/total with an ETA on a terminal unless `quiet`."""
    if quiet or not interactive():
        return index.sync()
    from nlmsync.cli._progress import index_progress

    with index_progress(label) as on_progress:
        return index.sync(on_progress=on_progress)


@app.command("index", epilog=examples(
    "nlmsync --vault ~/notes index",
    "nlmsync index --vault ~/notes --json   # counts and skipped notes as one JSON document",
))
def index_command(ctx: typer.Context, json_output: JsonFlag = False) -> None:
    """Build or update the BM25 index; print counts, skipped notes with reasons, and timing."""
    cli = cli_context(ctx)
    settings = cli.settings()
    index = open_index(settings)
    report = _sync_index(index, "indexing", json_output or cli.quiet)
    if json_output:
        emit_json(report.as_dict())
        return
    out = stdout_console()
    out.print(
        f"Indexed {report.indexed} notes in {report.seconds:.2f} s: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.unchanged} unchanged.")
    if report.skipped and cli.quiet:
        out.print(f"Skipped {len(report.skipped)} (run without -q to list them).")
    elif report.skipped:
        out.print(f"Skipped {len(report.skipped)}:")
        for skip in report.skipped:
            out.print(f"  {escape_path(skip.path)} — {escape_path(skip.reason)}")


def _snippet(settings: Settings | SearchSettings, path: str, query: str) -> str:
    from nlmsync.search import extract_snippet
    from nlmsync.vault import read_note_text

    try:
        text = read_note_text(settings.vault, path)
    except InputError:
        return ""
    return extract_snippet(text, query, max_length=settings.snippet_length)


def _results(index: NoteIndex, settings: Settings | SearchSettings, query: str, limit: int) -> dict[str, Any]:
    from nlmsync.search.bm25 import select

    hits = index.search(query, limit=max(limit, settings.top_n))
    chosen = {hit.path for hit in select(hits, settings.top_n, settings.cutoff_ratio, settings.min_k)}
    return {"query": query, "selected_count": len(chosen),
            "results": [_hit_dict(hit, hit.path in chosen, _snippet(settings, hit.path, query))
                        for hit in hits[:limit]]}


def _hit_dict(hit: SearchHit, selected: bool, snippet: str) -> dict[str, Any]:
    return {"path": hit.path, "score": round(hit.score, 6), "matched_terms": list(hit.matched_terms),
            "selected": selected, "snippet": snippet}


def _read_queries(path: Path) -> list[str]:
    try:
        raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: queries file not found") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read queries file ({exc.strerror})") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: queries file is not valid UTF-8 (byte {exc.start})") from None
    return [line.strip() for line in text.splitlines() if line.strip()]


@app.command("search", epilog=examples(
    'nlmsync search "heap sort" --vault ~/notes --limit 5',
    "nlmsync search --queries questions.txt   # one JSON line per query",
))
def search_command(
    ctx: typer.Context,
    query: Annotated[str | None, typer.Argument(help="What to look for.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Show at most this many notes.")] = 10,
    queries: Annotated[Path | None, typer.Option("--queries", help="Run one query per line of FILE ('-' = stdin); "
                                                 "print one JSON line per query.")] = None,
    json_output: JsonFlag = False,
) -> None:
    """Rank the vault's notes for QUERY with scores, matched terms, snippets, and the notes the selection rule picks."""
    if (query is None) == (queries is None):
        raise UsageError("give either a QUERY or --queries FILE")
    cli = cli_context(ctx)
    settings = cli.search_settings()
    batch = _read_queries(queries) if queries is not None else None
    if query is not None and not query.strip():
        raise UsageError("the query is empty")
    index = open_index(settings)
    if batch is not None:
        for line in batch:
            sys.stdout.write(json_line(_results(index, settings, line, limit)) + "\n")
        sys.stdout.flush()
    else:
        assert query is not None
        if index.dirty and not json_output:  # a first search of a big vault takes a while
            _sync_index(index, "indexing before the search", cli.quiet)
        document = _results(index, settings, query, limit)
        if json_output:
            emit_json(document)
        else:
            _print_results(document)
    _close(index)
    cli.exit_at_once = True


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
    out.print(f"[dim]✓ = selected for NotebookLM: {document['selected_count']} selected, {len(results)} shown[/]")
