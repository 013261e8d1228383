"""`nlmsync completion SHELL`: the shell completion script for bash, zsh, fish or PowerShell.

The script calls nlmsync back with `_NLMSYNC_COMPLETE` set; `main()` then answers with the candidates
(commands, options, choices) instead of running a command.
"""

from __future__ import annotations

from typing import Annotated

import typer

from nlmsync.cli._app import COMPLETE_VAR, app, examples
from nlmsync.errors import UsageError

SHELLS = ("bash", "zsh", "fish", "powershell")


def _shells(incomplete: str) -> list[str]:
    return [shell for shell in SHELLS if shell.startswith(incomplete)]


@app.command("completion", epilog=examples(
    'eval "$(nlmsync completion bash)"            # in ~/.bashrc',
    'eval "$(nlmsync completion zsh)"             # in ~/.zshrc',
    "nlmsync completion fish > ~/.config/fish/completions/nlmsync.fish",
))
def completion_command(
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh, fish or powershell.",
                                         autocompletion=_shells)],
) -> None:
    """Print the shell completion script for SHELL (commands, options and their choices complete on Tab)."""
    from typer.completion import get_completion_script

    if shell not in SHELLS:
        raise UsageError(f"SHELL: expected {', '.join(SHELLS[:-1])} or {SHELLS[-1]}, got '{shell}'")
    typer.echo(get_completion_script(prog_name="nlmsync", complete_var=COMPLETE_VAR, shell=shell))
