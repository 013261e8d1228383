"""nlmsync's command line: `main()` runs the Typer app and turns every known error into one line + exit code."""

from __future__ import annotations

import sys

import click
from typer.exceptions import TyperException

from nlmsync.cli import fake_cmds, search_cmds, server_cmds, sync_cmds  # noqa: F401  (register commands)
from nlmsync.cli._app import app
from nlmsync.errors import EXIT_UNEXPECTED, NlmsyncError, exit_code_for

__all__ = ["app", "main"]


def _fail(message: str, code: int, hint: str | None = None) -> None:
    sys.stderr.write(f"nlmsync: error: {message}\n")
    if hint:
        sys.stderr.write(f"nlmsync: hint: {hint}\n")
    sys.exit(code)


def main(argv: list[str] | None = None) -> None:
    """Entry point of the `nlmsync` console script."""
    try:
        app(args=argv, prog_name="nlmsync", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _fail("aborted", 130)
    except (click.ClickException, TyperException) as exc:  # typer >= 0.26 raises its own copy of click's errors
        exc.show()  # type: ignore[union-attr]  # every TyperException typer raises is one of those copies
        sys.exit(exc.exit_code)
    except NlmsyncError as exc:
        _fail(exc.message.splitlines()[0] if exc.message else type(exc).__name__, exit_code_for(exc), exc.hint)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except BrokenPipeError:
        sys.exit(EXIT_UNEXPECTED)
    except Exception as exc:  # noqa: BLE001 - the last line of defence: one line, never a traceback
        _fail(f"unexpected {type(exc).__name__}: {exc}", EXIT_UNEXPECTED,
              "please report this with the command you ran")
