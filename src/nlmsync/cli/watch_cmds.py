"""`nlmsync watch`: keep the search index (and with `--refresh` the notes already synced) current from vault file
events until Ctrl-C or SIGTERM, then say what the watch did (one JSON document with `--json`).

The watcher, anyio and the orchestrator are imported when the command runs, not with the module.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from nlmsync.cli._app import app, cli_context, examples
from nlmsync.cli._output import emit_json, escape_path, stderr_console

if TYPE_CHECKING:
    import anyio
    from anyio.abc import TaskStatus


@app.command("watch", epilog=examples(
    "nlmsync --vault ~/notes watch             # keep the search index current",
    "nlmsync --vault ~/notes watch --refresh   # and the notes already in the notebook",
))
@click.option("--refresh", is_flag=True, help="Also keep already-synced notes current in the notebook.")
@click.option("--debounce-ms", type=int, help="Wait this long for changes to settle.")
@click.option("--json", "json_output", is_flag=True, help="When stopped, print one JSON document: what the watch did.")
@click.pass_context
def watch_command(ctx: click.Context, refresh: bool, debounce_ms: int | None, json_output: bool) -> None:
    """Keep the index (and with --refresh the notebook) current from vault file events; Ctrl-C or SIGTERM stops."""
    cli = cli_context(ctx)
    settings = cli.settings(watch_debounce_ms=debounce_ms)
    from dataclasses import asdict

    import anyio

    from nlmsync.watch import WatchEvent, WatchPlan, watch_vault

    summary: dict[str, Any] = {"vault": str(Path(settings.vault)), "batch_count": 0, "modified_paths": [],
                               "deleted_paths": [], "renames": [], "events": []}
    ready: list[bool] = []

    def report(event: WatchEvent) -> None:
        summary["events"].append(asdict(event))
        stderr_console().print(escape_path(str(event)))

    def on_batch(plan: WatchPlan) -> None:
        if not ready:
            ready.append(True)  # the first (possibly empty) batch: the watch is really running now
            if not cli.quiet:
                stderr_console().print(f"Watching {escape_path(str(Path(settings.vault)))} (Ctrl-C to stop)…")
        if plan:
            summary["batch_count"] += 1
            summary["modified_paths"].extend(plan.modified)
            summary["deleted_paths"].extend(plan.deleted)
            summary["renames"].extend({"from": old, "to": new} for old, new in plan.renamed_mappings)
            summary["events"].append({"kind": "indexed", "modified_paths": list(plan.modified),
                                      "deleted_paths": list(plan.deleted)})
            if not cli.quiet:
                stderr_console().print(f"index: {len(plan.modified)} changed, {len(plan.deleted)} removed")

    async def main() -> None:
        stop = anyio.Event()
        async with anyio.create_task_group() as tasks:
            await tasks.start(_stop_on_sigterm, stop)
            await watch_vault(settings, refresh=refresh, on_message=report, on_batch=on_batch, stop_event=stop)
            tasks.cancel_scope.cancel()

    try:
        anyio.run(main)
    except KeyboardInterrupt:
        pass
    stderr_console().print("Stopped; state is consistent.")
    if json_output:
        emit_json(summary)


async def _stop_on_sigterm(stop: anyio.Event, *, task_status: TaskStatus[None]) -> None:
    """Set `stop` on SIGTERM (a service manager, `kill`): the watch then ends after the batch it is applying,
    as Ctrl-C ends it, instead of the process dying with the default action (exit 143, no summary)."""
    import signal

    import anyio

    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        task_status.started()
        async for _ in signals:
            stop.set()
            return
