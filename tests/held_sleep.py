"""An injected sleep a test controls: how a wait for a login or for the usage allowance is driven without a clock.

Each sleep is recorded (`asked`) and lasts until the test ends it (`tick`); `say` records what the code under
test says (a `warn`), and `until` waits — on these events, never on time — for what the test expects."""

from __future__ import annotations

from collections.abc import Callable

import anyio


class HeldSleep:
    def __init__(self) -> None:
        self.asked: list[float] = []
        self.said: list[str] = []
        self._ended = 0
        self._changed = anyio.Event()

    async def sleep(self, seconds: float) -> None:
        self.asked.append(seconds)
        self._notify()
        mine = len(self.asked)
        while self._ended < mine:
            await self._changed.wait()

    def tick(self) -> None:
        """End the oldest sleep still running."""
        self._ended += 1
        self._notify()

    def say(self, line: str) -> None:
        self.said.append(line)
        self._notify()

    async def until(self, condition: Callable[[], object]) -> None:
        while not condition():
            await self._changed.wait()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()
