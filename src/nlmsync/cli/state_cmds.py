"""`nlmsync check`: the state file read whole, as an open after an unclean stop reads it."""

from __future__ import annotations

import click

from nlmsync.cli._app import app, cli_context, examples, json_flag
from nlmsync.cli._output import emit_json, escape_path, stdout_console


@app.command("check", epilog=examples(
    "nlmsync --vault ~/notes check",
    "nlmsync check --json   # {\"state_file\": …, \"exists\": …}",
))
@json_flag
@click.pass_context
def check_command(ctx: click.Context, json_output: bool) -> None:
    """Read every page of the state file and its schema; exit 2 when it is damaged, changing nothing."""
    from nlmsync.store.db import check_integrity

    path = cli_context(ctx).settings().state_path
    check_integrity(path)
    exists = path.is_file() and path.stat().st_size > 0
    if json_output:
        emit_json({"state_file": str(path), "exists": exists})
        return
    shown = escape_path(str(path))
    stdout_console().print(f"{shown}: ok, every page read." if exists else f"{shown}: no state file yet.")
