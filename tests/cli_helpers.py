"""Running the command line from a test: in this process (`run_cli`), or as a child process with an environment
that holds no nlmsync setting (`environment_without_settings`); where `--server fake` keeps a vault's notebooks
(`fake_state`)."""

from __future__ import annotations

import os
from pathlib import Path

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


def fake_state(vault: Path) -> Path:
    """The file `--server fake` keeps `vault`'s notebooks in (in the test's own state directory)."""
    from nlmsync.app.servers import fake_state_dir
    from nlmsync.notebooklm import FAKE_STATE_FILE

    return fake_state_dir(vault) / FAKE_STATE_FILE
