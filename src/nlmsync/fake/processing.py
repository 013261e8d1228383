"""Files the fake takes a while to process (`Faults.processing_polls`), as NotebookLM takes minutes to transcribe
audio and video: an add that waits for one polls its status, as the real server does every `POLL_SECONDS`, until it
is processed or the add's `wait_timeout` has passed. The fake waits for nothing real between polls: a poll passes
each time the server answers another call (so the other uploads are seen to go on meanwhile), and at once while
no other call is under way."""

from __future__ import annotations

from dataclasses import dataclass

import anyio
import anyio.lowlevel

POLL_SECONDS = 3.0
"""How often the real server asks NotebookLM whether a source is processed while an add waits."""


@dataclass
class Processing:
    """A file source an add waits for: its id and file, the title to give it once processed, the add's
    `wait_timeout`, the polls it still needs, the polls made, and the call log's entry of the add."""

    source_id: str
    file_path: str
    title: str | None
    wait_timeout: float
    left: int
    record: int
    polls: int = 0

    def timed_out(self) -> bool:
        """Whether the add's wait has run out (the real server polls every `POLL_SECONDS`)."""
        return self.polls * POLL_SECONDS >= self.wait_timeout


class Polls:
    """What moves the processing on: the calls under way, those of them waiting for a file, and an event set each
    time the server answers a call."""

    def __init__(self) -> None:
        self.under_way = 0
        self.waiting = 0
        self._answered: anyio.Event | None = None

    def answered(self) -> None:
        """A call was answered: the waits poll once more."""
        if self._answered is not None:
            self._answered.set()
            self._answered = None

    async def next(self) -> None:
        """Wait for the next poll: the next answer to another call, or none while no other call is under way."""
        if self.under_way > self.waiting:
            if self._answered is None:
                self._answered = anyio.Event()
            await self._answered.wait()
        else:
            await anyio.lowlevel.checkpoint()
