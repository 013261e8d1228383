"""The command line's root: the `nlmsync` group, its global options and the per-run context every command reads.

The command line is click's: a command module declares its command with `@app.command(...)` and click's
decorators. The per-run context itself (`CliContext`) and the tables of commands and global options are
`cli._context`'s.

The global options (`--vault`, `--config`, `--state`, `--server`, `--notebook`, `--quiet`) are accepted before
the command and after it alike (`nlmsync search tar --vault ~/notes`): `GlobalOptionsGroup` gives every
command a copy of them that writes into the same `CliContext`; given twice, the one after the command wins.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from nlmsync.cli._context import (
    COMMAND_MODULES,
    COMPLETE_VAR,
    GLOBAL_TARGETS,
    GLOBAL_VALUE_OPTIONS,
    WITHOUT_GLOBAL_OPTIONS,
    CliContext,
    Interrupted,
)

__all__ = ["COMMAND_MODULES", "COMPLETE_VAR", "GLOBAL_VALUE_OPTIONS", "CliContext", "app", "cli_context", "examples",
           "json_flag", "path_type"]

F = TypeVar("F", bound=Callable[..., Any])


def cli_context(ctx: click.Context) -> CliContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliContext):
        obj = CliContext()
        ctx.find_root().obj = obj
    return obj


def _store_global(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Callback of a global option given after the command: it overrides the one given before."""
    if value is not None and value is not False and not ctx.resilient_parsing:
        assert param.name is not None
        cli_context(ctx).set_global(param.name, value)
    return value


class GlobalOptionsGroup(click.Group):
    """The root command: each subcommand also accepts the global options (unless it has a flag of that name, or
    is one of `WITHOUT_GLOBAL_OPTIONS`, which they do nothing for), so they may follow the command as users of
    git, gh or restic expect; `--help` lists the commands in `COMMAND_MODULES`' order, whichever command modules
    were imported first."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        taken = {opt for p in cmd.params for opt in (*p.opts, *p.secondary_opts)}
        for param in [] if (name or cmd.name) in WITHOUT_GLOBAL_OPTIONS else self.params:
            if param.name in GLOBAL_TARGETS and not taken.intersection(param.opts):
                twin = copy.copy(param)
                twin.expose_value = False
                twin.callback = _store_global
                cmd.params.append(twin)
        super().add_command(cmd, name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Bare `nlmsync` prints the help and exits 0, as gh and git do: nothing went wrong (click's
        `no_args_is_help` exits 2)."""
        if not args and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(0)
        return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise Interrupted from None

    def list_commands(self, ctx: click.Context) -> list[str]:
        order = {name: position for position, name in enumerate(COMMAND_MODULES)}
        return sorted(self.commands, key=lambda name: order.get(name, len(order)))


def path_type() -> click.Path:
    """A path option or argument's type: a `Path`, not checked here (the command says what is wrong with it)."""
    return click.Path(path_type=Path)


def json_flag(function: F) -> F:
    """The --json flag of every command that prints one result (`watch` and `server-info` word theirs
    differently): the command's `json_output` parameter."""
    return click.option("--json", "json_output", is_flag=True,
                        help="Print one JSON document on stdout and nothing else.")(function)


def examples(*lines: str) -> str:
    """A command's help epilog: its example command lines, kept as written (click's `\\b` stops rewrapping)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  {line}" for line in lines)


def _complete_server(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """What a shell offers for `--server`: the bundled fake's two names (a command line or a URL is the user's)."""
    return [name for name in ("fake", "fake-stdio") if name.startswith(incomplete)]


def _print_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        from nlmsync import __version__

        click.echo(f"nlmsync {__version__}")
        ctx.exit()


@click.group(
    "nlmsync",
    cls=GlobalOptionsGroup,
    help="Keep a NotebookLM notebook stocked with the right notes from a markdown vault, and ask it questions.",
    epilog="Global options may also follow the command (nlmsync search tar --vault ~/notes). "
           "'nlmsync COMMAND -h' shows a command's options and examples.",
    context_settings={"help_option_names": ["-h", "--help"], "show_default": True},
)
@click.option("--vault", type=path_type(), help="The markdown vault folder (default: .).")
@click.option("--config", type=path_type(), help="Config file (default: <vault>/.nlmsync/config.toml).")
@click.option("--state", type=path_type(), help="State file (default: <vault>/.nlmsync/state.db).")
@click.option("--server", shell_complete=_complete_server,
              help="NotebookLM MCP server: a command line, an http://…/mcp URL, 'fake' (the bundled fake, in "
                   "process) or 'fake-stdio'. Default: 'notebooklm-mcp --transport stdio', the real server.")
@click.option("--notebook", help="Notebook id, or new:TITLE to create one.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display and no per-note lines: the summary and "
                                                  "errors only (for cron).")
@click.option("--version", is_flag=True, is_eager=True, expose_value=False, callback=_print_version,
              help="Print nlmsync's version and exit.")
@click.pass_context
def app(ctx: click.Context, vault: Path | None, config: Path | None, state: Path | None, server: str | None,
        notebook: str | None, quiet: bool) -> None:
    cli = cli_context(ctx)  # the one `main()` handed in, or a new one
    cli.vault, cli.config, cli.quiet = vault, config, quiet
    cli.global_overrides.update(state=state, server=server, notebook=notebook)
