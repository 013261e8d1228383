"""Fixtures for the NotebookLM client tests: the real server's published tools."""

from __future__ import annotations

import pytest
from tests.notebooklm.protocol import RealTools, list_real_tools


@pytest.fixture(scope="session")
def real_tools(tmp_path_factory: pytest.TempPathFactory) -> RealTools:
    """The installed real server's version and input schemas, listed once per session (no login needed)."""
    return list_real_tools(tmp_path_factory.mktemp("real-server"))
