"""The Typer application, its global options and the per-run context every command reads."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from nlmsync.config import Settings

app = typer.Typer(
    name="nlmsync",
    help="Keep a NotebookLM notebook stocked with the right notes from a markdown vault, and ask it questions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


@dataclass
class CliContext:
    """What the global options said; `settings()` merges file, environment and flags."""

    vault: Path | None = None
    config: Path | None = None
    global_overrides: dict[str, Any] = field(default_factory=dict)

    def settings(self, **overrides: Any) -> Settings:
        """Settings for this run; keyword arguments are command flags (None = not given)."""
        from nlmsync.config import load_settings  # pydantic: imported by the commands that run, not by --help

        return load_settings(vault=self.vault, config_file=self.config, env=os.environ,
                             overrides={**self.global_overrides, **overrides})


def cli_context(ctx: typer.Context) -> CliContext:
    obj = ctx.find_root().obj
    if not isinstance(obj, CliContext):
        obj = CliContext()
        ctx.find_root().obj = obj
    return obj


@app.callback()
def _global_options(
    ctx: typer.Context,
    vault: Annotated[Path | None, typer.Option("--vault", help="The markdown vault folder (default: .).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Config file (default: <vault>/.nlmsync/config.toml).")] = None,
    state: Annotated[Path | None, typer.Option("--state", help="State file (default: <vault>/.nlmsync/state.db).")] = None,
    server: Annotated[str | None, typer.Option("--server", help="NotebookLM MCP server: 'fake', a command line, or an http://…/mcp URL.")] = None,
    notebook: Annotated[str | None, typer.Option("--notebook", help="Notebook id, or new:TITLE to create one.")] = None,
) -> None:
    ctx.obj = CliContext(vault=vault, config=config,
                         global_overrides={"state": state, "server": server, "notebook": notebook})
