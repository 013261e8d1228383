"""The Typer application, its global options and the per-run context every command reads.

The per-run context itself (`CliContext`) and the tables of commands and global options are `cli._context`'s,
which a search given in its plain forms uses without typer (`cli._plain_search`).

The global options (`--vault`, `--config`, `--state`, `--server`, `--notebook`, `--quiet`) are accepted before
the command and after it alike (`nlmsync search tar --vault ~/notes`): `GlobalOptionsGroup` gives every
command a copy of them that writes into the same `CliContext`; given twice, the one after the command wins.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from nlmsync.cli._coercion import install as install_plain_coercion
from nlmsync.cli._context import COMMAND_MODULES, COMPLETE_VAR, GLOBAL_TARGETS, GLOBAL_VALUE_OPTIONS, CliContext

__all__ = ["COMMAND_MODULES", "COMPLETE_VAR", "GLOBAL_VALUE_OPTIONS", "CliContext", "JsonFlag", "app", "cli_context",
           "examples"]

def cli_context(ctx: typer.Context) -> CliContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliContext):
        obj = CliContext()
        ctx.find_root().obj = obj
    return obj


def _store_global(ctx: Any, param: Any, value: Any) -> Any:
    """Callback of a global option given after the command: it overrides the one given before."""
    if value is not None and value is not False and not ctx.resilient_parsing:
        cli_context(ctx).set_global(param.name, value)
    return value


class GlobalOptionsGroup(TyperGroup):
    """The root command: each subcommand also accepts the global options (unless it has a flag of that name,
    as `fake-server --state` has), so they may follow the command as users of git, gh or restic expect. Values that need no conversion skip typer's pydantic
    coercion (`cli._coercion`)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        # the listing's order is `COMMAND_MODULES`', whichever command modules were imported first
        order = {name: position for position, name in enumerate(COMMAND_MODULES)}
        self.commands = dict(sorted(self.commands.items(), key=lambda item: order.get(item[0], len(order))))
        globals_ = [p for p in self.params if p.name in GLOBAL_TARGETS]
        for command in self.commands.values():
            taken = {opt for p in command.params for opt in (*p.opts, *p.secondary_opts)}
            for param in globals_:
                if taken.intersection(param.opts):
                    continue
                twin = copy.copy(param)
                twin.expose_value = False
                twin.callback = _store_global
                command.params.append(twin)
        install_plain_coercion(self)


# The --json flag of every command that prints one result (`watch` and `server-info` word theirs differently).
JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout and nothing else.")]


def examples(*lines: str) -> str:
    """A command's help epilog: its example command lines, kept as written (click's `\\b` stops rewrapping)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


def _print_version(value: bool) -> None:
    if value:
        from nlmsync import __version__

        typer.echo(f"nlmsync {__version__}")
        raise typer.Exit()


app = typer.Typer(
    name="nlmsync",
    cls=GlobalOptionsGroup,
    help="Keep a NotebookLM notebook stocked with the right notes from a markdown vault, and ask it questions.",
    epilog="Global options may also follow the command (nlmsync search tar --vault ~/notes). "
           "'nlmsync COMMAND -h' shows a command's options and examples.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _global_options(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Option("--vault", help="The markdown vault folder (default: .).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Config file (default: <vault>/.nlmsync/config.toml).")] = None,
    state: Annotated[Path | None, typer.Option("--state", help="State file (default: <vault>/.nlmsync/state.db).")] = None,
    server: Annotated[str | None, typer.Option("--server", help="NotebookLM MCP server: 'fake' (in-process), 'fake-stdio', a command line, or an http://…/mcp URL.")] = None,
    notebook: Annotated[str | None, typer.Option("--notebook", help="Notebook id, or new:TITLE to create one.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress display and no per-note lines: "
                                        "the summary and errors only (for cron).")] = False,
    version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_print_version,
                                          help="Print nlmsync's version and exit.")] = False,
) -> None:
    cli = cli_context(ctx)  # the one `main()` handed in, or a new one
    cli.vault, cli.config, cli.quiet = vault, config, quiet
    cli.global_overrides.update(state=state, server=server, notebook=notebook)
