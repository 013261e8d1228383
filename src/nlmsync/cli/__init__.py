"""nlmsync's command line: `main()` runs the Typer app and turns every known error into one line + exit code."""

from __future__ import annotations

import os
import sys

from typer.exceptions import Abort, TyperException

from nlmsync.cli import (  # noqa: F401  (register commands)
    completion_cmds,
    fake_cmds,
    notebook_cmds,
    search_cmds,
    server_cmds,
    sync_cmds,
    watch_cmds,
)
from nlmsync.cli._app import app
from nlmsync.cli._output import visible
from nlmsync.cli.completion_cmds import COMPLETE_VAR
from nlmsync.errors import EXIT_UNEXPECTED, NlmsyncError, exit_code_for

__all__ = ["app", "main"]


class _NeverRaised(Exception):
    """Stands in for click's exceptions while click is not imported: nothing can have raised them then."""


def _click_error(name: str) -> type[BaseException]:
    """click's exception class `name` (Exit, Abort, ClickException), looked up only once an exception is
    being handled. typer >= 0.26 runs on its own copy of click, so a command never imports click itself
    (about 10 ms); an older typer runs on click and has imported it."""
    click = sys.modules.get("click")
    return getattr(click.exceptions, name) if click is not None else _NeverRaised


def _fail(message: str, code: int, hint: str | None = None) -> None:
    # one line, whatever it names: control characters (a newline or ESC in a file name) are shown as escapes
    sys.stderr.write(f"nlmsync: error: {visible(message)}\n")
    if hint:
        sys.stderr.write(f"nlmsync: hint: {visible(hint)}\n")
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `nlmsync` console script."""
    if COMPLETE_VAR in os.environ:  # a shell asking for completions (see `nlmsync completion`)
        from typer.completion import completion_init

        completion_init()
    try:
        # Outside standalone mode typer hands back the exit code of a `typer.Exit` and, as 130, of a
        # KeyboardInterrupt (Ctrl-C) instead of raising them: a code dropped here would exit 0.
        code = app(args=argv, prog_name="nlmsync", standalone_mode=False)
    except _click_error("Exit") as exc:
        sys.exit(exc.exit_code)
    except (_click_error("Abort"), Abort):  # typer >= 0.26 raises its own Abort (end of input at a prompt)
        _fail("aborted", 130)
    except (_click_error("ClickException"), TyperException) as exc:  # typer >= 0.26: its own copy of click's
        exc.show()  # type: ignore[union-attr]  # every TyperException typer raises is one of those copies
        sys.exit(exc.exit_code)
    except NlmsyncError as exc:
        _fail(exc.message or type(exc).__name__, exit_code_for(exc), exc.hint)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.exit(EXIT_UNEXPECTED)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        _fail(f"unexpected {type(exc).__name__}: {exc}", EXIT_UNEXPECTED,
              "please report this with the command you ran")
    if code == 130:
        _fail("interrupted", 130)
    if isinstance(code, int) and code:
        sys.exit(code)
