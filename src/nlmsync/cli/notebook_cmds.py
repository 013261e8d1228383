"""`nlmsync notebooks` (the server's notebooks: how a user finds an id) and `nlmsync conversations` (the
questions asked so far, from the state file: a list, or one conversation's turns with the notes each relied on).

The MCP client, anyio and the state store are imported when a command runs, not with the module.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from nlmsync._text import visible
from nlmsync.cli._app import app, cli_context, examples, json_flag
from nlmsync.cli._output import emit_json, escape, stdout_console, when
from nlmsync.errors import UsageError

if TYPE_CHECKING:
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
    store = _open_state(settings)
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


def _open_state(settings: Settings) -> StateStore | None:
    """The state file, open; None when there is none yet (nothing was synced or asked with it).

    Raises:
        StateError: something that is not a state file is where it should be (a folder, a broken link …).
    """
    if not os.path.lexists(settings.state_path):
        return None
    from nlmsync.store import StateStore

    return StateStore.open(settings.state_path, settings)


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
    store = _open_state(settings)
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
    store = _open_state(settings)
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
