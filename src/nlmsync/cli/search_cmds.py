"""`nlmsync index` and `nlmsync search`: build the BM25 index and query it from the command line.

The commands' work is `cli.searching`'s; the index, the state file and rich are imported when a command runs,
not with the module, so that `--help` and the other commands do not pay for them.
"""

from __future__ import annotations

from pathlib import Path

import click

from nlmsync.cli._app import app, cli_context, examples, json_flag, path_type
from nlmsync.cli._output import emit_json, escape_path, stdout_console
from nlmsync.cli.searching import open_index, run_search, sync_index
from nlmsync.errors import StateError


@app.command("index", epilog=examples(
    "nlmsync --vault ~/notes index",
    "nlmsync index --vault ~/notes --json   # counts and skipped notes as one JSON document",
))
@json_flag
@click.pass_context
def index_command(ctx: click.Context, json_output: bool) -> None:
    """Build or update the search index; print counts, skipped notes with reasons, and timing."""
    cli = cli_context(ctx)
    settings = cli.settings()
    index = open_index(settings)
    report = sync_index(index, "indexing", json_output or cli.quiet)
    if index.save_error is not None:
        from nlmsync.store.db import state_failure

        path = settings.state_path
        raise state_failure(path, index.save_error, "write") or StateError(
            f"{path}: the index could not be saved in the state file ({index.save_error})")
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


@app.command("search", epilog=examples(
    'nlmsync search "heap sort" --vault ~/notes --limit 5',
    "nlmsync search --queries questions.txt   # one JSON line per query",
))
@click.argument("query", required=False)
@click.option("--limit", type=click.IntRange(min=1), default=10,
              help="Show at most this many notes.")
@click.option("--queries", type=path_type(), metavar="FILE",
              help="Run one query per line of FILE ('-' = stdin); print one JSON line per query.")
@json_flag
@click.pass_context
def search_command(ctx: click.Context, query: str | None, limit: int, queries: Path | None, json_output: bool) -> None:
    """Rank the vault's notes for QUERY with scores, matched words and snippets, marking those ask would use."""
    run_search(cli_context(ctx), query, limit, queries, json_output)
