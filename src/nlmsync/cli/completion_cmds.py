"""`nlmsync completion SHELL`: the shell completion script for bash, zsh, fish or PowerShell.

The script calls nlmsync back with `_NLMSYNC_COMPLETE` set to `SHELL_complete`; `main()` then answers with the
candidates (commands, options, choices) instead of running a command. bash, zsh and fish are click's own;
PowerShell's is `PowerShellComplete` below, registered with click when this module is imported (`main()` imports
every command module to answer a completion request).
"""

from __future__ import annotations

import os
from typing import Any

import click
from click.shell_completion import CompletionItem, ShellComplete, add_completion_class, get_completion_class

from nlmsync.cli._app import COMPLETE_VAR, app, examples
from nlmsync.errors import UsageError

SHELLS = ("bash", "zsh", "fish", "powershell")

# PowerShell hands a native command's completer the command line so far and the word under the cursor; the
# completer runs nlmsync with them in the environment and turns each answer line (type, value, help, separated
# by tabs) into a completion result.
_POWERSHELL_SOURCE = """\
Register-ArgumentCompleter -Native -CommandName %(prog_name)s -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $line = $commandAst.ToString()
    $end = [Math]::Min($cursorPosition - $commandAst.Extent.StartOffset, $line.Length)
    $env:COMP_WORDS = $line.Substring(0, $end)
    $env:COMP_CWORD = $wordToComplete
    $env:%(complete_var)s = "powershell_complete"
    %(prog_name)s | ForEach-Object {
        $kind, $value, $help = $_ -split "`t", 3
        if (-not $help) { $help = $value }
        [System.Management.Automation.CompletionResult]::new($value, $value, 'ParameterValue', $help)
    }
    Remove-Item Env:%(complete_var)s, Env:COMP_WORDS, Env:COMP_CWORD
}
"""


class PowerShellComplete(ShellComplete):
    """Completion for PowerShell: the script registers a native argument completer (`_POWERSHELL_SOURCE`)."""

    name = "powershell"
    source_template = _POWERSHELL_SOURCE

    def get_completion_args(self) -> tuple[list[str], str]:
        from click.shell_completion import split_arg_string

        words = split_arg_string(os.environ.get("COMP_WORDS", ""))
        incomplete = os.environ.get("COMP_CWORD", "")
        if incomplete and words and words[-1] == incomplete:
            words.pop()
        return words[1:], incomplete

    def format_completion(self, item: CompletionItem) -> str:
        return f"{item.type}\t{item.value}\t{item.help or ''}"


add_completion_class(PowerShellComplete)  # bash, zsh and fish are click's own


def _shells(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    return [shell for shell in SHELLS if shell.startswith(incomplete)]


@app.command("completion", epilog=examples(
    'eval "$(nlmsync completion bash)"            # in ~/.bashrc',
    'eval "$(nlmsync completion zsh)"             # in ~/.zshrc',
    "mkdir -p ~/.config/fish/completions && nlmsync completion fish > ~/.config/fish/completions/nlmsync.fish",
    "nlmsync completion powershell | Out-String | Invoke-Expression   # in $PROFILE",
))
@click.argument("shell", metavar="SHELL", shell_complete=_shells)
def completion_command(shell: str) -> None:
    """Print the shell completion script for SHELL: bash, zsh, fish or powershell (commands, options and their
    choices complete on Tab)."""
    if shell not in SHELLS:
        raise UsageError(f"SHELL: expected {', '.join(SHELLS[:-1])} or {SHELLS[-1]}, got '{shell}'")
    complete = get_completion_class(shell)
    assert complete is not None
    script: Any = complete(app, {}, "nlmsync", COMPLETE_VAR).source()
    click.echo(script)
