"""Fixtures for the NotebookLM client and fake-server tests: an in-process fake, a no-wait sleep recorder, the
real server's published tools."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.notebooklm.protocol import RealTools, list_real_tools

from nlmsync.notebooklm.fake import FakeNotebookLM


class SleepRecorder:
    """An injectable `sleep` that records the requested delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture(scope="session")
def real_tools(tmp_path_factory: pytest.TempPathFactory) -> RealTools:
    """The installed real server's version and input schemas, listed once per session (no login needed)."""
    return list_real_tools(tmp_path_factory.mktemp("real-server"))


@pytest.fixture
def fake() -> FakeNotebookLM:
    return FakeNotebookLM()


@pytest.fixture
def spawn_http_fake(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start `nlmsync fake-server --transport http --port 0 ARGS…` processes; each call returns the URL."""
    procs: list[subprocess.Popen[str]] = []

    def spawn(*args: str) -> str:
        proc = subprocess.Popen([sys.executable, "-m", "nlmsync", "fake-server", "--transport", "http", "--port", "0",
                                 *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
        procs.append(proc)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        return url

    spawn.procs = procs  # type: ignore[attr-defined]
    yield spawn
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
