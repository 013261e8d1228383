"""Fixtures for the NotebookLM client and fake-server tests: an in-process fake and a no-wait sleep recorder."""

from __future__ import annotations

import pytest

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


@pytest.fixture
def fake() -> FakeNotebookLM:
    return FakeNotebookLM()
