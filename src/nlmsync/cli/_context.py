"""The per-run context every command reads (`CliContext`: what the global options said) and the tables of the
command line — which module registers each command, the global options — on which `cli._app` builds the click
application.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nlmsync.config import SearchSettings, Settings

# Where each global option's value goes in `CliContext`: the attribute, or the settings key of an override.
GLOBAL_TARGETS = {"vault": "vault", "config": "config", "quiet": "quiet",
                   "state": "state", "server": "server", "notebook": "notebook"}
_PATH_OPTIONS = frozenset({"vault", "config", "state"})
# The global options that take a value: the word after one of them is its value, never the command's name.
GLOBAL_VALUE_OPTIONS_IN_ORDER = ("--vault", "--config", "--state", "--server", "--notebook")
GLOBAL_VALUE_OPTIONS = frozenset(GLOBAL_VALUE_OPTIONS_IN_ORDER)

# The module (in `nlmsync.cli`) that registers each command, in the order `--help` lists them. `main()`
# imports only the module of the command it runs, so click builds that command alone.
COMMAND_MODULES = {
    "index": "search_cmds",
    "search": "search_cmds",
    "refresh": "sync_cmds",
    "ask": "sync_cmds",
    "status": "sync_cmds",
    "sources": "notebook_cmds",
    "reconcile": "sync_cmds",
    "check": "state_cmds",
    "watch": "watch_cmds",
    "conversations": "notebook_cmds",
    "notebooks": "notebook_cmds",
    "serve": "server_cmds",
    "server-info": "fake_cmds",
    "fake-server": "fake_cmds",
    "completion": "completion_cmds",
}
# Commands the global options say nothing to (the fake server keeps its own state; a completion script is the
# same for every vault): their help does not list them, and they take none after the command.
WITHOUT_GLOBAL_OPTIONS = frozenset({"fake-server", "completion"})
# Options whose value, a note's path, may be left out: `ask Q --save` and `ask --save Q` save under a name made
# from the question, `ask Q --save answers/heap.md` as that file (the word after is the value when it is a note's).
OPTIONAL_NOTE_VALUES = frozenset({"--save"})
COMPLETE_VAR = "_NLMSYNC_COMPLETE"  # set when a shell's completion script asks for candidates


def with_optional_values(args: Sequence[str]) -> list[str]:
    """`args` with each option of `OPTIONAL_NOTE_VALUES` given without a note's path after it written `--save=`
    (an empty value: the default), so the word after it is taken for what it is (click's own optional values
    would take `ask --save "How…?"`'s question for FILE)."""
    if not OPTIONAL_NOTE_VALUES.intersection(args):
        return list(args)
    from nlmsync.vault import has_note_suffix

    out: list[str] = []
    for position, word in enumerate(args):
        if word == "--":
            return out + list(args[position:])
        following = args[position + 1] if position + 1 < len(args) else ""
        out.append(f"{word}=" if word in OPTIONAL_NOTE_VALUES and not has_note_suffix(following) else word)
    return out


class Interrupted(Exception):
    """Ctrl-C while a command ran: `main()` says so in one line and exits 130 (click would make it an abort,
    after a blank line)."""


@dataclass
class CliContext:
    """What the global options said; `settings()` merges file, environment and flags."""

    vault: Path | None = None
    config: Path | None = None
    quiet: bool = False
    global_overrides: dict[str, Any] = field(default_factory=dict)
    # set by a command that has written all its output and closed what it opened: run as a program,
    # `main()` then ends the process without the interpreter's teardown (freeing every object for nothing)
    exit_at_once: bool = False

    def settings(self, **overrides: Any) -> Settings:
        """Settings for this run; keyword arguments are command flags (None = not given)."""
        from nlmsync.config import load_settings  # pydantic: imported by the commands that run, not by --help

        return load_settings(vault=self.vault, config_file=self.config, env=os.environ,
                             overrides={**self.global_overrides, **overrides})

    def search_settings(self) -> SearchSettings | Settings:
        """`settings()` for a search: the plain defaults when nothing configures them (no pydantic then)."""
        from nlmsync.config import search_settings

        return search_settings(vault=self.vault, config_file=self.config, env=os.environ,
                               overrides=self.global_overrides)

    def global_words(self) -> list[str]:
        """The global options this run was given on its command line, as words (`--vault DIR --server fake`),
        for a command the run proposes to carry them."""
        words: list[str] = []
        for name in GLOBAL_VALUE_OPTIONS_IN_ORDER:
            key = name.removeprefix("--")
            value = getattr(self, key) if key in ("vault", "config") else self.global_overrides.get(key)
            if value is not None:
                words += [name, str(value)]
        return words

    def set_global(self, name: str, value: Any) -> None:
        """Record global option `name` (a parameter name of the root command, `_app.app`)."""
        if name in _PATH_OPTIONS and value is not None:
            value = Path(value)
        if name in ("vault", "config", "quiet"):
            setattr(self, name, value)
        else:
            self.global_overrides[name] = value
