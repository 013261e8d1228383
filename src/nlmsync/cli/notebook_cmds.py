"""`nlmsync notebooks` (the server's notebooks: how a user finds an id), `nlmsync sources` (what the notebook
holds, source by source) and `nlmsync conversations` (the questions asked so far, from the state file: a list,
or one conversation's turns with the notes each relied on).

The MCP client, anyio, the orchestrator and the state store are imported when a command runs, not with the module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from nlmsync._text import visible
from nlmsync.cli._app import app, cli_context, examples, json_flag
from nlmsync.cli._output import emit_json, escape, escape_path, notebook_heading, stdout_console, when
from nlmsync.cli._runs import open_state, run_app
from nlmsync.errors import UsageError

if TYPE_CHECKING:
    from nlmsync.app import NotebookSource, Orchestrator, SourcesReport
    from nlmsync.config import Settings
    from nlmsync.notebooklm import NotebookInfo
    from nlmsync.store import StateStore

QUESTION_CHARS = 60
ID_CHARS = 8


def _given_notebook(settings: Settings) -> str | None:
    """The notebook id the settings name (`notebook`), if any: a `new:TITLE` to create names none yet."""
    return settings.notebook if settings.notebook and not settings.notebook.startswith("new:") else None


def _known_default(settings: Settings) -> str | None:
    """The notebook this vault uses: `notebook` from the settings, else the state file's default (if any)."""
    given = _given_notebook(settings)
    if given is not None:
        return given
    store = open_state(settings)
    if store is None:
        return None
    with store:
        return store.default_notebook()


@app.command("notebooks", epilog=examples(
    "nlmsync notebooks                                   # id, title and sources of each notebook",
    'nlmsync --server "notebooklm-mcp --transport stdio" notebooks --json'))
@json_flag
@click.pass_context
def notebooks_command(ctx: click.Context, json_output: bool) -> None:
    """List the server's notebooks: id, title, source count (* = the one this vault uses)."""
    settings = cli_context(ctx).settings()
    import anyio

    from nlmsync.app.servers import connect_server

    async def listing() -> list[NotebookInfo]:
        async with connect_server(settings) as client:
            return (await client.notebook_list()).notebooks

    notebooks = anyio.run(listing)
    default = _known_default(settings)
    if json_output:
        emit_json({"notebooks": [{"id": nb.id, "title": nb.title, "source_count": nb.source_count,
                                  "url": nb.url, "default": nb.id == default} for nb in notebooks],
                   "notebook_count": len(notebooks)})
        return
    out = stdout_console()
    if not notebooks:
        out.print("No notebooks yet: create one with --notebook new:TITLE (refresh or ask).")
        return
    width = max(len(nb.id) for nb in notebooks)
    for nb in notebooks:
        mark = "*" if nb.id == default else " "
        out.print(f"{mark} {nb.id:<{width}}  {nb.source_count:>4} sources  {escape(visible(nb.title))}")
    if default is None:
        out.print("\nUse one with --notebook ID, or set notebook = \"ID\" in .nlmsync/config.toml.")


@app.command("sources", epilog=examples(
    "nlmsync --vault ~/notes sources          # packs and the notes each holds, notes alone, sources you added",
    "nlmsync sources --json"))
@json_flag
@click.pass_context
def sources_command(ctx: click.Context, json_output: bool) -> None:
    """List what the notebook holds, source by source: each pack with the range of notes it holds, the notes
    uploaded alone, and the sources you added yourself (nlmsync never changes or evicts those)."""
    cli = cli_context(ctx)

    async def listing(orchestrator: Orchestrator) -> SourcesReport:
        from nlmsync.app import list_sources

        return await list_sources(orchestrator)

    report = run_app(cli.settings(), listing, label="sources", quiet=json_output or cli.quiet)
    if json_output:
        emit_json(report)
        return
    _print_sources(report, cli.quiet)


def _print_sources(report: SourcesReport, quiet: bool) -> None:
    out = stdout_console().print
    out(notebook_heading(report.notebook_id, report.title, report.source_count, report.capacity))
    counts = [f"{report.pack_count:,} {'pack' if report.pack_count == 1 else 'packs'} holding "
              f"{report.packed_note_count:,} notes" if report.pack_count else "",
              f"{report.alone_count:,} {'note' if report.alone_count == 1 else 'notes'} alone",
              f"{report.attachment_count:,} {'attachment' if report.attachment_count == 1 else 'attachments'}"
              if report.attachment_count else "",
              f"{report.unmanaged_count:,} not uploaded by nlmsync",
              f"{report.orphan_count:,} {'orphan' if report.orphan_count == 1 else 'orphans'}"
              if report.orphan_count else ""]
    out("  " + ", ".join(c for c in counts if c))
    if quiet:
        return
    sections = [("pack", "Packs (the range of notes each holds):"), ("note", "Notes alone:"),
                ("attachment", "Attachments (the vault's files, each its own source):"),
                ("unmanaged", "Not uploaded by nlmsync (never changed or evicted):"),
                ("orphan", "With nlmsync's titles but unknown to the state file ('nlmsync status' says what to do):")]
    for kind, heading in sections:
        lines = [_source_line(s) for s in report.sources if s.kind == kind]
        if lines:
            out(f"\n{heading}")
            for line in lines:
                out(f"  {line}")


def _source_line(source: NotebookSource) -> str:
    ident = f"  [dim]{source.source_id}[/dim]"
    if source.kind == "pack":
        notes = f"{source.note_count:,} {'note' if source.note_count == 1 else 'notes'}"
        return (f"{escape_path(source.first_path or '')} … {escape_path(source.last_path or '')}  "
                f"({notes}, {source.byte_count or 0:,} bytes){ident}")
    if source.kind == "attachment":
        return f"{escape_path(source.path or '')}  ({source.byte_count or 0:,} bytes){ident}"
    if source.kind == "note":
        part = f" (part {(source.part or 0) + 1} of {source.part_count})" if (source.part_count or 1) > 1 else ""
        return f"{escape_path(source.path or '')}{part}{ident}"
    return f"{escape(visible(source.title))}{ident}"


def _short(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


@app.command("conversations", epilog=examples(
    "nlmsync conversations                  # newest first: id, turns, last asked, first question",
    "nlmsync conversations show 7ba8c638    # one conversation's turns (an id prefix is enough)",
    "nlmsync conversations show 7ba8c638 --json"))
@click.argument("action", nargs=-1, metavar="[list | show ID]")
@json_flag
@click.pass_context
def conversations_command(ctx: click.Context, action: tuple[str, ...], json_output: bool) -> None:
    """The questions you asked with `ask`, by conversation: a list, newest first, or one with its turns.

    ACTION is 'list' (the default) or 'show ID'.
    """
    words = list(action) or ["list"]
    if words == ["list"]:
        _list_conversations(cli_context(ctx).settings(), json_output)
    elif len(words) == 2 and words[0] == "show":
        _show_conversation(cli_context(ctx).settings(), words[1], json_output)
    else:
        raise UsageError(f"conversations: expected 'list' or 'show ID', got '{' '.join(words)}'")


def _list_conversations(settings: Settings, json_output: bool) -> None:
    store = open_state(settings)
    summaries = []
    if store is not None:
        with store:
            summaries = store.conversation_summaries(_given_notebook(settings))
    if json_output:
        emit_json({"conversations": [{"notebook_id": s.notebook_id, "conversation_id": s.conversation_id,
                                      "turn_count": s.turn_count, "started_at": s.started_at,
                                      "last_asked_at": s.last_asked_at, "first_question": s.first_question}
                                     for s in summaries],
                   "conversation_count": len(summaries)})
        return
    out = stdout_console()
    if not summaries:
        out.print('No conversations yet: ask a question with nlmsync ask "…".')
        return
    for s in summaries:
        turns = f"{s.turn_count} turn{'s' if s.turn_count != 1 else ''}"
        out.print(f"{s.conversation_id[:ID_CHARS]}  {turns:>9}  {when(s.last_asked_at):>14}  "
                  f"{escape(visible(_short(s.first_question, QUESTION_CHARS)))}")
    out.print("\nShow one: nlmsync conversations show ID (a prefix of the id is enough).")


def _show_conversation(settings: Settings, prefix: str, json_output: bool) -> None:
    store = open_state(settings)
    if store is None:
        raise UsageError(f"no conversation '{prefix}': nothing was asked with this state file yet")
    with store:
        found = store.find_conversations(prefix)
        if not found:
            raise UsageError(f"no conversation '{prefix}'", hint="nlmsync conversations lists them")
        if len({conv for _, conv in found}) > 1:
            raise UsageError(f"'{prefix}' starts {len(found)} conversation ids: give more of it",
                             hint="nlmsync conversations lists them")
        notebook_id, conversation_id = found[0]
        turns = _turns(store, notebook_id, conversation_id)
    if json_output:
        emit_json({"notebook_id": notebook_id, "conversation_id": conversation_id, "turns": turns,
                   "turn_count": len(turns)})
        return
    out = stdout_console()
    out.print(f"conversation {conversation_id} · notebook {notebook_id} · {len(turns)} turns")
    for number, turn in enumerate(turns, 1):
        out.print(f"\n[bold]{number}. {escape(visible(turn['question']))}[/bold]  [dim]{when(turn['asked_at'])}[/dim]")
        out.print(escape(turn["answer"]))
        if turn["cited_paths"]:
            out.print("cited: " + ", ".join(escape(visible(p)) for p in turn["cited_paths"]))
        if turn["selected_paths"]:
            out.print("[dim]selected: " + ", ".join(escape(visible(p)) for p in turn["selected_paths"]) + "[/dim]")


def _turns(store: StateStore, notebook_id: str, conversation_id: str) -> list[dict[str, Any]]:
    """The kept turns, oldest first: question, answer, time, the notes selected and the notes cited."""
    records = {(r.question, r.asked_at): r for r in store.query_records(notebook_id, conversation_id)}
    turns = []
    for message in store.messages(notebook_id, conversation_id):
        record = records.get((message.question, message.asked_at))
        cited: list[str] = []
        if record is not None:
            for source_id in record.citations.values():
                row = store.mapping_by_source_id(notebook_id, str(source_id))
                if row is not None and row.path not in cited:
                    cited.append(row.path)
        turns.append({"question": message.question, "answer": message.answer, "asked_at": message.asked_at,
                      "selected_paths": record.selected_paths if record else [], "cited_paths": cited,
                      "source_ids": record.source_ids if record else []})
    return turns
