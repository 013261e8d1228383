"""`refresh`, `ask`, `status` and `reconcile`: the notebook side of the command line.

Each command builds its settings, runs an `Orchestrator` (`cli._runs.run_app`) and prints the result: one JSON
document with `--json`, readable lines otherwise, and a rich progress display on stderr when it is a terminal.
The orchestrator, the sync reports, anyio and rich are imported when a command runs, not with the module.
"""

from __future__ import annotations

import functools
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from nlmsync.cli._app import app, cli_context, examples, json_flag
from nlmsync.cli._output import (
    emit_json,
    escape,
    escape_path,
    notebook_heading,
    stderr_console,
    stdout_console,
    when,
)
from nlmsync.cli._runs import run_app
from nlmsync.errors import (
    EXIT_AUTH,
    EXIT_CAPACITY,
    EXIT_CONNECTION,
    EXIT_PARTIAL,
    DiskFullError,
    NlmsyncError,
    PartialFailure,
)

if TYPE_CHECKING:
    # The app layer pulls in the MCP SDK (about a second of imports); commands import it when they run.
    from nlmsync.app import (
        AskResult,
        EvictionCandidate,
        LocalChangeEntry,
        ReconcileReport,
        StatusReport,
    )
    from nlmsync.sync import Branch, CapacitySource, NoteOutcome, PackOutcome, RefreshReport

# A refresh stopped with one of these still prints its report (what was done and recorded before it stopped).
REPORTED_EXIT_CODES = frozenset({EXIT_CAPACITY, EXIT_CONNECTION, EXIT_AUTH, EXIT_PARTIAL})


@functools.cache
def _branch_style() -> dict[Branch, str]:
    from nlmsync.sync import Branch

    return {Branch.ADDED: "green", Branch.REPLACED: "cyan", Branch.RENAMED: "blue", Branch.REUSED: "dim",
            Branch.EVICTED: "yellow", Branch.REMOVED: "yellow", Branch.EXCLUDED: "dim", Branch.FAILED: "red"}


def _note_line(note: NoteOutcome) -> str:
    from nlmsync.sync import Branch

    style = _branch_style().get(note.branch, "")
    extra = ""
    if note.renamed_from:
        extra += f" (from {escape_path(note.renamed_from)})"
    if note.split:
        extra += f" (split into {note.part_count} parts)"
    if note.adopted:
        extra += " (adopted existing source)"
    if note.source_ids:
        extra += f" → {', '.join(note.source_ids)}"
    if note.reason and note.branch in (Branch.EVICTED, Branch.REMOVED, Branch.EXCLUDED):
        # a reason that starts with the branch's word is not made to say it twice: "excluded a.md by pattern"
        said = note.reason.removeprefix(f"{note.branch.value} ")
        extra += f" — {escape_path(note.reason)}" if said == note.reason else f" {escape_path(said)}"
    if note.error:
        extra += f" — {escape_path(note.error)}"
    return f"[{style}]{note.branch.value:<9}[/{style}] {escape_path(note.path)}{extra}" if style else \
        f"{note.branch.value:<9} {escape_path(note.path)}{extra}"


def _pack_line(pack: PackOutcome) -> str:
    style = _branch_style().get(pack.branch, "")
    extra = f" ({pack.note_count} {'note' if pack.note_count == 1 else 'notes'}, {pack.byte_count:,} bytes)" \
        if pack.paths else ""
    if pack.adopted:
        extra += " (adopted existing source)"
    if pack.source_id:
        extra += f" → {pack.source_id}"
    if pack.reason:
        extra += f" — {escape_path(pack.reason)}"
    if pack.error:
        extra += f" — {escape_path(pack.error)}"
    return f"[{style}]{'pack ' + pack.branch.value:<14}[/{style}] {escape_path(pack.title)}{extra}"


def _print_refresh(report: RefreshReport, json_output: bool, quiet: bool, verbose: bool = False) -> None:
    from nlmsync.sync import Branch

    if json_output:
        emit_json(report)
        return
    for notice in report.notices:
        stderr_console().print(f"nlmsync: note: {escape(notice)}")
    out = stdout_console()
    for note in report.notes:
        if not quiet or note.branch is Branch.FAILED:
            out.print(_note_line(note))
    for pack in report.packs:
        if pack.branch is Branch.FAILED or verbose or not (quiet or pack.branch is Branch.REUSED):
            out.print(_pack_line(pack))
            if verbose:  # every note, under the pack that holds it
                for path in pack.paths:
                    out.print(f"    {escape_path(path)}")
    counted = [", ".join(f"{n} {b}" for b, n in sorted(report.counts().items()))]
    packs: dict[str, int] = {}
    for pack in report.packs:
        packs[pack.branch.value] = packs.get(pack.branch.value, 0) + 1
    if packs:
        counted.append("packs: " + ", ".join(f"{n} {b}" for b, n in sorted(packs.items())))
    counts = "; ".join(c for c in counted if c) or "nothing to do"
    prefix = "Dry run — would do: " if report.dry_run else ""
    layout = f": {report.layout}" if report.layout is not None and report.layout.pack_count else ""
    out.print(f"{prefix}{counts}. Notebook {report.notebook_id}: {report.source_count}/"
              f"{report.capacity} sources{layout}.")
    if report.pending_deletions_done_count or report.pending_deletions_left_count:
        out.print(f"Pending deletions: {report.pending_deletions_done_count} done, "
                  f"{report.pending_deletions_left_count} still pending.")


@app.command("refresh", epilog=examples(
    "nlmsync --vault ~/notes --notebook new:Notes refresh algorithms/   # create the notebook, upload a folder",
    "nlmsync --vault ~/notes refresh -q                  # cron: the summary line only",
    'nlmsync refresh --query "heap sort" --dry-run       # what the notes a question selects would need',
))
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@click.option("--query", help="Refresh the notes this query selects.")
@click.option("--all", "all_notes", is_flag=True, help="Mirror the whole vault (or only the given PATHs): upload every "
                                                       "note, remove the sources of notes that left it.")
@click.option("--dry-run", is_flag=True, help="Print the plan; make no change anywhere.")
@click.option("--capacity", type=int, help="Sources the notebook may hold.")
@click.option("--concurrency", type=int, help="Concurrent uploads.")
@click.option("-v", "--verbose", is_flag=True, help="List every pack, reused ones too, with every note it holds.")
@json_flag
@click.pass_context
def refresh_command(ctx: click.Context, paths: tuple[str, ...], query: str | None, all_notes: bool, dry_run: bool,
                    capacity: int | None, concurrency: int | None, verbose: bool, json_output: bool) -> None:
    """Upload notes to the notebook, and say what was done with each: reused, replaced, renamed, added, evicted, …

    PATHs are notes or folders (default: the notes uploaded before).
    """
    cli = cli_context(ctx)
    settings = cli.settings(capacity=capacity, concurrency=concurrency)
    try:
        from nlmsync.cli.paths import refuse_missing, vault_relative_args

        targets = vault_relative_args(Path(settings.vault), paths) if paths else []
        if not all_notes:  # with --all a path no longer in the vault may still name synced notes
            refuse_missing(Path(settings.vault), targets)
        report = run_app(settings, lambda orch: orch.refresh(targets, query=query, all_notes=all_notes, dry_run=dry_run),
                      label="refresh", quiet=json_output or cli.quiet)
    except NlmsyncError as exc:
        from nlmsync.sync import RefreshReport

        # exit 6, or a run stopped part-way (exit 3, 4, 5, or 7 for a full disk): what was done and recorded is
        # still printed — with --json always (a script reads one document whatever happened), on a terminal when
        # there is something
        stopped = exc.exit_code in REPORTED_EXIT_CODES or isinstance(exc, DiskFullError)
        if isinstance(exc.report, RefreshReport) and stopped and (
                json_output or isinstance(exc, PartialFailure) or exc.report.notes):
            _print_refresh(exc.report, json_output, cli.quiet, verbose)
        raise
    _print_refresh(report, json_output, cli.quiet, verbose)


def _print_ask(result: AskResult, json_output: bool) -> None:
    if json_output:
        emit_json(result)
        return
    out = stdout_console()
    for notice in result.notices:
        stderr_console().print(f"nlmsync: note: {escape_path(notice)}")
    out.print(escape(result.answer))
    if result.citations:
        out.print("\nSources:")
        for c in result.citations:
            if c.path:
                where = escape_path(c.path)
            elif c.pack:
                where = f"pack {escape_path(c.pack)} (the quote is in none of its notes as they are now)"
            else:
                where = f"source {c.source_id}"
            heading = f" › {escape_path(c.heading)}" if c.heading else ""
            place = f", {c.place}" if c.place else ""
            out.print(f"  [{c.number}] {where}{place}{heading}")
    if result.conversation_id:
        which = "followed up in conversation" if result.continued else "new conversation"
        out.print(f"\n[dim]{which} {result.conversation_id} · {len(result.source_ids)} sources"
                  f" ({len(result.carried_over_source_ids)} carried over)[/dim]")
    if result.saved_path:
        out.print(f"Saved to {escape_path(result.saved_path)}")


@app.command("ask", epilog=examples(
    'nlmsync --vault ~/notes ask "How does heapsort work?"',
    'nlmsync ask "And its worst case?"                   # follows up: it is about the same notes',
    'nlmsync ask --continue "Any other way?"            # follows up in the latest conversation whatever it asks',
    'nlmsync ask --new "What did I write about kimchi?"',
    'nlmsync ask "How does heapsort work?" --save      # keep the answer as a note in answers/',
))
@click.argument("question")
@click.option("--conversation", help="Continue this conversation.")
@click.option("--new", is_flag=True, help="Start a new conversation.")
@click.option("--continue", "continue_latest", is_flag=True,
              help="Follow up in the latest conversation even when the question shares no note with it.")
@click.option("--save", metavar="[FILE]",
              help="Also write the answer into the vault as a note: FILE (ending in .md), or a name made from the "
                   "question in answers/.")
@json_flag
@click.pass_context
def ask_command(ctx: click.Context, question: str, conversation: str | None, new: bool, continue_latest: bool,
                save: str | None, json_output: bool) -> None:
    """Ask the notebook QUESTION and print the answer, its citations naming your notes and headings.

    The notes that match the question best are uploaded first (those already there are reused). A question
    about the notes of the latest conversation follows it up, with the notes it used before as well; any other
    starts a new conversation (--continue follows up anyway).
    """
    if sum((new, conversation is not None, continue_latest)) > 1:
        raise click.BadParameter("--new, --continue and --conversation cannot be used together")
    cli = cli_context(ctx)
    settings = cli.settings()
    target = None
    if save is not None:  # the place is checked before the question is asked
        from nlmsync.app.answer_notes import answer_target
        from nlmsync.cli.paths import vault_relative_target

        target = answer_target(settings.vault, question, vault_relative_target(settings.vault, save) if save else "")
    result = run_app(settings, lambda orch: orch.ask(question, conversation_id=conversation, new=new,
                                                     continue_latest=continue_latest),
                     label="ask", quiet=json_output or cli.quiet)
    if target is not None:
        from nlmsync.app.answer_notes import save_answer

        save_answer(settings.vault, target, result, sync=settings.sync_saved_answers)
        result = result.model_copy(update={"saved_path": target})
    _print_ask(result, json_output)


def _print_section(heading: str, lines: list[str]) -> None:
    """A blank line, `heading`, then `lines` indented; nothing when there are no lines."""
    if lines:
        out = stdout_console().print
        out(f"\n{heading}")
        for line in lines:
            out(f"  {line}")


def _change_line(change: LocalChangeEntry) -> str:
    what = escape_path(change.path)
    if change.renamed_to:
        what += f" → {escape_path(change.renamed_to)}"
    return f"{change.change + ':':<10} {what}"


def _eviction_line(candidate: EvictionCandidate) -> str:
    uses = f"used {candidate.use_count}×" if candidate.use_count else "never asked about"
    return f"{escape_path(candidate.path)} ({uses}, last {when(candidate.last_used)})"


def _carrying_options(report: StatusReport, options: list[str]) -> StatusReport:
    """`report` with each `nlmsync …` command it proposes carrying the global `options` this run was given, so
    that a command copied from it, from any folder, talks to the same vault, server and notebook."""
    if not options:
        return report
    given = " ".join(shlex.quote(word) for word in options)

    def carried(command: str) -> str:
        return f"nlmsync {given} {command.removeprefix('nlmsync ')}" if command.startswith("nlmsync ") else command

    return report.model_copy(update={
        "local_changes": [c.model_copy(update={"command": carried(c.command)}) for c in report.local_changes],
        "next_steps": [s.model_copy(update={"command": carried(s.command)}) for s in report.next_steps]})


@functools.cache
def _capacity_sources() -> dict[CapacitySource, str]:
    """Where a notebook's capacity comes from, as `status` says it."""
    from nlmsync.sync import CapacitySource

    return {
        CapacitySource.SETTING: "given for this run (--capacity, NLMSYNC_CAPACITY or config.toml)",
        CapacitySource.REMEMBERED: "given on an earlier run for this notebook",
        CapacitySource.LEARNED: "the server refused a source beyond it",
        CapacitySource.PLAN: "what the notebook's plan allows",
        CapacitySource.HELD: "the smallest plan's that allows what the notebook holds",
        CapacitySource.DEFAULT: "the default; set 'capacity' to your plan's limit",
    }


def _print_status(report: StatusReport, json_output: bool) -> None:
    if json_output:
        emit_json(report)
        return
    for notice in report.notices:
        stderr_console().print(f"nlmsync: note: {escape(notice)}")
    out = stdout_console().print
    out(notebook_heading(report.notebook_id, report.title, report.source_count, report.capacity))
    plan = f" ({report.plan})" if report.plan and report.capacity_source == "plan" else ""
    out(f"  capacity {report.capacity}: {_capacity_sources()[report.capacity_source]}{plan}")
    from nlmsync.cli._allowance import allowance_line

    out(f"  allowance: {allowance_line(report.allowance)}")
    if report.layout is not None and report.layout.pack_count:
        out(f"  {report.layout}")
    for placed in report.notes:
        where = f"in pack {escape_path(placed.pack)}" if placed.where == "pack" and placed.pack else placed.where
        if placed.reason:  # "excluded by pattern" says it all; "not synced (empty)"
            where = escape_path(placed.reason) if placed.where == "excluded" else f"{where} ({escape_path(placed.reason)})"
        ids = f" ({', '.join(placed.source_ids)})" if placed.source_ids else ""
        out(f"  {escape_path(placed.path)}: {where}{ids}")
    synced = len(report.active_sources) + (report.layout.packed_note_count if report.layout is not None else 0)
    out(f"  {synced} synced, {len(report.stale_sources)} missing from the notebook, "
        f"{len(report.orphan_source_ids)} orphans, {report.unmanaged_count} not uploaded by nlmsync")
    if report.attachment_count:
        out(f"  {report.attachment_count} of them {'an attachment' if report.attachment_count == 1 else 'attachments'}"
            f" ({report.attachment_bytes:,} bytes of files)")
    out(f"  server: {escape(report.server)}")
    _print_section("Changed in the vault, not synced yet:", [_change_line(c) for c in report.local_changes])
    _print_section("Synced, but the source is gone from the notebook:",
                   [f"{escape_path(entry.path)} ({entry.source_id})" for entry in report.stale_sources])
    _print_section("In the notebook with an nlmsync title, unknown to the state file:", report.orphan_source_ids)
    _print_section("Evicted first when room is needed:", [_eviction_line(e) for e in report.next_evictions])
    if report.pending_deletions:
        out(f"\nWaiting to be deleted: {len(report.pending_deletions)} sources")
    _print_section("Recently evicted:", [f"{escape_path(ev.path)} {when(ev.evicted_at)} ({escape_path(ev.reason)})"
                                         for ev in report.recent_evictions])
    _print_section("Next steps:", [f"{escape(step.why)}: [bold]{escape(step.command)}[/bold]"
                                   for step in report.next_steps])
    if not report.next_steps and not report.local_changes:
        out("\nUp to date: nothing to do.")


@app.command("status", epilog=examples(
    "nlmsync --vault ~/notes status",
    "nlmsync status --json",
    "nlmsync status notes/heapsort.md                   # which source holds a note: its pack, or its own",
))
@click.argument("paths", nargs=-1, metavar="[PATH]...")
@json_flag
@click.pass_context
def status_command(ctx: click.Context, paths: tuple[str, ...], json_output: bool) -> None:
    """What changed in the vault, what the notebook lacks, what goes next, capacity used — and what to run.

    Given PATHs (notes), it also says which source holds each: a pack shared with other notes, a source of its
    own, or none.
    """
    cli = cli_context(ctx)
    settings = cli.settings()
    from nlmsync.cli.paths import vault_relative_args

    targets = vault_relative_args(Path(settings.vault), paths or ())
    report = run_app(settings, lambda orch: orch.status(targets), label="status", quiet=json_output or cli.quiet)
    _print_status(_carrying_options(report, cli.global_words()), json_output)


def _print_reconcile(report: ReconcileReport, json_output: bool, quiet: bool) -> None:
    if json_output:
        emit_json(report)
        return
    out = stdout_console()
    out.print(f"Notebook {report.notebook_id}: {report.active_count} active, {len(report.stale_paths)} stale, "
              f"{len(report.canonicalized_paths)} canonicalized, {len(report.orphan_source_ids)} orphans.")
    for path in [] if quiet else report.stale_paths:
        out.print(f"  stale {escape_path(path)}")


@app.command("reconcile", epilog=examples(
    "nlmsync --vault ~/notes reconcile",
    "nlmsync reconcile -q   # the summary line only",
))
@json_flag
@click.pass_context
def reconcile_command(ctx: click.Context, json_output: bool) -> None:
    """Bring the state file in line with the notebook: which uploaded notes are still there, which are gone.

    Also follows sources the server now lists under new ids. refresh, ask and status do this as they go.
    """
    cli = cli_context(ctx)
    _print_reconcile(run_app(cli.settings(), lambda orch: orch.reconcile(), label="reconcile",
                          quiet=json_output or cli.quiet), json_output, cli.quiet)
