"""Fixtures shared by every test package: a private copy of the fixture vault, the anyio backend."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
FIXTURE_VAULT = REPO_ROOT / "fixtures" / "vault"


def pytest_report_header(config: pytest.Config) -> str:
    from tests.notebooklm.protocol import REAL_DISTRIBUTION, real_server_version

    version = real_server_version()
    found = f"{REAL_DISTRIBUTION} {version}" if version else f"{REAL_DISTRIBUTION} is not installed"
    return f"real NotebookLM MCP server compared with the fake: {found}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A writable copy of fixtures/vault (symlinks kept as links), without any state a demo run left there."""
    target = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, target, symlinks=True, ignore=shutil.ignore_patterns(".nlmsync"))
    return target
