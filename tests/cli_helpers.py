"""Running the command line from a test: in this process (`run_cli`), or as a child process with an environment
that holds no nlmsync setting (`environment_without_settings`)."""

from __future__ import annotations

import os

import pytest

from nlmsync.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `nlmsync ARGS…` in this process; (exit code, stdout, stderr) of that run alone."""
    capsys.readouterr()
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def environment_without_settings() -> dict[str, str]:
    """This process's environment less every NLMSYNC_* variable (each one is read as a setting)."""
    return {name: value for name, value in os.environ.items() if not name.startswith("NLMSYNC_")}
