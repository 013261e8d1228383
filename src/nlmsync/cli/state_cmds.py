"""`nlmsync check`: the state file read whole, as an open after an unclean stop reads it, and what it records as
synced (notes and attachments, per notebook)."""

from __future__ import annotations

import click

from nlmsync.cli._app import app, cli_context, examples, json_flag
from nlmsync.cli._output import emit_json, escape, escape_path, stdout_console


@app.command("check", epilog=examples(
    "nlmsync --vault ~/notes check",
    "nlmsync check --json   # {\"state_file\": …, \"exists\": …}",
))
@json_flag
@click.pass_context
def check_command(ctx: click.Context, json_output: bool) -> None:
    """Read every page of the state file and its schema, and count the notes and attachments it records as synced;
    exit 2 when it is damaged, changing nothing."""
    from nlmsync.store.census import synced_counts
    from nlmsync.store.db import check_integrity

    path = cli_context(ctx).settings().state_path
    check_integrity(path)
    exists = path.is_file() and path.stat().st_size > 0
    counts = synced_counts(path)
    if json_output:
        emit_json({"state_file": str(path), "exists": exists,
                   "notebooks": [{"notebook_id": c.notebook_id, "title": c.title, "notes": c.notes,
                                  "attachments": c.attachments} for c in counts]})
        return
    shown = escape_path(str(path))
    out = stdout_console().print
    out(f"{shown}: ok, every page read." if exists else f"{shown}: no state file yet.")
    for count in counts:
        title = f" ({escape(count.title)})" if count.title else ""
        out(f"  notebook {escape(count.notebook_id)}{title}: {_counted(count.notes, 'note')} and "
            f"{_counted(count.attachments, 'attachment')} synced")


def _counted(n: int, thing: str) -> str:
    return f"{n:,} {thing}{'' if n == 1 else 's'}"
