"""nlmsync's command line: `main()` runs the click app and turns every known error into one line + exit code.

Each command is registered by its module (`_context.COMMAND_MODULES`); `main()` imports the module of the
command it runs, so a run builds that command alone, and `nlmsync.cli.app` is the app with every command.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from nlmsync._text import visible
from nlmsync.cli._context import (
    COMMAND_MODULES,
    COMPLETE_VAR,
    GLOBAL_VALUE_OPTIONS,
    CliContext,
    Interrupted,
    with_optional_values,
)
from nlmsync.cli._output import emit_error_json, request_json
from nlmsync.errors import (
    EXIT_UNEXPECTED,
    DiskFullError,
    NlmsyncError,
    exit_code_for,
    is_disk_full,
    leaf_exceptions,
)

if TYPE_CHECKING:
    import click

    app: click.Group  # built on first use by __getattr__

__all__ = ["app", "main"]


def __getattr__(name: str) -> click.Group:
    if name == "app":  # the app as a whole (its help, its commands): every command registered
        return _with_commands(None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _command_name(argv: Sequence[str]) -> str | None:
    """The command `argv` runs: its first word that is neither a global option nor an option's value."""
    words = iter(argv)
    for word in words:
        if word in GLOBAL_VALUE_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def _with_commands(name: str | None) -> click.Group:
    """The app with command `name` registered, or every command when `name` is none of them (`--help`, a
    mistyped name: the listing and the suggestions need them all)."""
    from nlmsync.cli._app import app

    modules = [COMMAND_MODULES[name]] if name in COMMAND_MODULES else dict.fromkeys(COMMAND_MODULES.values())
    for module in modules:
        importlib.import_module(f"{__name__}.{module}")
    return app


def _fail(message: str, code: int, hint: str | None = None) -> NoReturn:
    # one line, whatever it names: control characters (a newline or ESC in a file name) are shown as escapes
    try:
        emit_error_json(message, code, hint)
    except (OSError, ValueError):  # stdout closed: stderr still says it
        pass
    sys.stderr.write(f"nlmsync: error: {visible(message)}\n")
    if hint:
        sys.stderr.write(f"nlmsync: hint: {visible(hint)}\n")
    sys.exit(code)


def _fail_for(exc: BaseException) -> NoReturn:
    if is_disk_full(exc):  # a file written outside the state file (a lock, the fake server's state …)
        exc = DiskFullError(getattr(exc, "filename", None) or "a file nlmsync writes")
    if isinstance(exc, NlmsyncError):
        _fail(exc.message or type(exc).__name__, exit_code_for(exc), exc.hint)
    _fail(f"unexpected {type(exc).__name__}: {exc}", EXIT_UNEXPECTED, "please report this with the command you ran")


def _exit_at_once() -> None:
    """End the process here, its output flushed, without the interpreter's teardown; a stream that cannot be
    flushed (a closed pipe) is left to the interpreter's exit, which reports it as before."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return
    os._exit(0)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `nlmsync` console script and of `python -m nlmsync` (`argv` None: `sys.argv`).

    Run as a program (`argv` None), a command that succeeded and said it leaves nothing to close
    (`CliContext.exit_at_once`, a search) ends the process at once: the interpreter's teardown frees every
    object of the process for nothing. Called with `argv` (tests, other Python code) it returns or raises
    SystemExit as always.
    """
    args = with_optional_values(sys.argv[1:] if argv is None else argv)
    completing = COMPLETE_VAR in os.environ  # a shell asking for completions (see `nlmsync completion`)
    cli = CliContext()
    request_json(args)
    try:
        code = _run_click(args, cli, completing)
    except NlmsyncError as exc:
        _fail_for(exc)
    except ExceptionGroup as group:  # an error raised in a task group is said as itself, not as the group
        leaves = list(leaf_exceptions(group))
        _fail_for(next((e for e in leaves if isinstance(e, NlmsyncError) or is_disk_full(e)), leaves[0]))
    except (KeyboardInterrupt, Interrupted):
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.exit(EXIT_UNEXPECTED)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        _fail_for(exc)
    if isinstance(code, int) and code:
        sys.exit(code)
    if argv is None and cli.exit_at_once:
        _exit_at_once()


def _run_click(args: list[str], cli: CliContext, completing: bool) -> object:
    """The app run on `args` with the command its words name registered; its exit code (click's own errors — a
    bad option or argument, said as `nlmsync: error: …` with the command's usage as the hint, an aborted prompt —
    exited here; `--help` and `--version` return 0)."""
    from click.exceptions import Abort, ClickException, NoArgsIsHelpError, UsageError

    app = _with_commands(None if completing else _command_name(args))
    try:
        # outside standalone mode click hands back the exit code of `ctx.exit()` instead of raising it
        return app.main(args=args, prog_name="nlmsync", complete_var=COMPLETE_VAR, standalone_mode=False, obj=cli)
    except Abort as exc:  # Ctrl-C, or the end of input at a prompt
        _fail("interrupted" if isinstance(exc.__cause__, KeyboardInterrupt) else "aborted", 130)
    except NoArgsIsHelpError as exc:  # `nlmsync` alone: the help, as click prints it
        exc.show()
        sys.exit(exc.exit_code)
    except UsageError as exc:
        from nlmsync.cli._usage import usage_error

        message, hint = usage_error(exc)
        _fail(message, exc.exit_code, hint)
    except ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    return None
