"""`nlmsync completion SHELL`: the shell completion script for bash, zsh, fish or PowerShell.

The script calls nlmsync back with `_NLMSYNC_COMPLETE` set; `main()` then answers with the candidates
(commands, options, choices) instead of running a command.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from nlmsync.cli._app import COMPLETE_VAR, app, examples


class Shell(str, Enum):
    bash = "bash"
    zsh = "zsh"
    fish = "fish"
    powershell = "powershell"


@app.command("completion", epilog=examples(
    'eval "$(nlmsync completion bash)"            # in ~/.bashrc',
    'eval "$(nlmsync completion zsh)"             # in ~/.zshrc',
    "nlmsync completion fish > ~/.config/fish/completions/nlmsync.fish",
))
def completion_command(
    shell: Annotated[Shell, typer.Argument(help="The shell to complete in.")],
) -> None:
    """Print the shell completion script for SHELL (commands, options and their choices complete on Tab)."""
    from typer.completion import get_completion_script

    typer.echo(get_completion_script(prog_name="nlmsync", complete_var=COMPLETE_VAR, shell=shell.value))
