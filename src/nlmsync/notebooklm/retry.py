"""The retry policy of MCP calls and the client-side rate limit for adds.

The retry policy: execute once; on failure retry only when the failure is a connection problem AND the call is
idempotent AND retrying on connection issues is not disabled. The one exception is an add the server
refused as rate-limited: it was definitely not applied, so `AddRateLimiter` pauses and it is sent again. Read-only tools are idempotent; `source_add`,
`source_delete`, `notebook_create`, `notebook_query` (and every other mutating tool) are never retried —
a failed mutation is recovered by reconciliation, never by a blind retry. Retries use tenacity with
bounded exponential backoff and jitter; `sleep` is injectable so tests never wait.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import anyio
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from nlmsync.errors import ConnectionProblem

__all__ = [
    "IDEMPOTENT_TOOLS",
    "AddRateLimiter",
    "Sleep",
    "call_with_retry",
    "is_retryable",
]

IDEMPOTENT_TOOLS = frozenset({"server_info", "notebook_get", "notebook_list", "source_get_content",
                              "source_describe", "usage_get"})
BACKOFF_MULTIPLIER = 0.5
BACKOFF_MAX = 8.0
BACKOFF_JITTER = 0.5
# Pauses after a rate-limited add (seconds): at most these, 220 s in all, before the remaining adds fail.
RATE_LIMIT_PAUSES = (10.0, 30.0, 60.0, 120.0)
# NotebookLM's published limit on source creations, the rate taken after a first rate-limit answer.
PUBLISHED_ADDS_PER_MINUTE = 20.0

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


def is_retryable(exc: BaseException, *, idempotent: bool, retry_on_connection_issue: bool) -> bool:
    """Whether a failed call is tried again: a connection problem, on an idempotent call, with retrying not
    disabled."""
    return isinstance(exc, ConnectionProblem) and idempotent and retry_on_connection_issue


async def call_with_retry(attempt: Callable[[], Awaitable[T]], *, idempotent: bool, attempts: int,
                          retry_on_connection_issue: bool = True, sleep: Sleep = anyio.sleep) -> T:
    """Run `attempt` once, and again (up to `attempts` in all) while `is_retryable` says so.

    The last failure is re-raised as it was.
    """
    retrying = AsyncRetrying(
        retry=retry_if_exception(lambda exc: is_retryable(
            exc, idempotent=idempotent, retry_on_connection_issue=retry_on_connection_issue)),
        stop=stop_after_attempt(attempts),
        wait=wait_exponential_jitter(multiplier=BACKOFF_MULTIPLIER, max=BACKOFF_MAX, jitter=BACKOFF_JITTER),
        sleep=sleep,
        reraise=True,
    )

    async def run() -> T:
        return await attempt()

    return await retrying(run)


class AddRateLimiter:
    """Spaces `source_add` calls to at most `per_minute` starts per minute (None = no limit), and slows down
    when the server says it is adding too fast.

    A rate-limit answer (RESOURCE_EXHAUSTED) is a definite "not applied", so the refused add may be sent
    again — after a pause, at a lower rate (half the current one; the published 20 per minute when none was
    set). Concurrent adds refused in the same burst share one pause. The pauses are bounded
    (`RATE_LIMIT_PAUSES`): once they are used up, `limited` answers False and every later add is refused at
    once (`exhausted`). `clock` and `sleep` are injectable; concurrent callers queue on one lock.
    """

    def __init__(self, per_minute: float | None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Sleep = anyio.sleep, pauses: Sequence[float] = RATE_LIMIT_PAUSES) -> None:
        self.per_minute = per_minute
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self.pauses = tuple(pauses)
        self.pauses_taken: list[float] = []
        self.exhausted = False
        self._clock = clock
        self._sleep = sleep
        self._next_start = -math.inf
        self._burst = 0
        self._lock = anyio.Lock()

    async def wait_turn(self) -> int:
        """Return when the next add may start; returns the burst it starts in (for `limited`)."""
        if self.interval <= 0:
            return self._burst
        async with self._lock:
            delay = self._next_start - self._clock()
            if delay > 0:
                await self._sleep(delay)
            self._next_start = max(self._clock(), self._next_start) + self.interval
            return self._burst

    def limited(self, burst: int) -> bool:
        """The server refused, as rate-limited, an add that started in `burst`. Returns whether to send it
        again (its `wait_turn` then takes the pause); False once the pauses are used up."""
        if self.exhausted:
            return False
        if burst != self._burst:
            return True  # a pause was already set after this add started
        if len(self.pauses_taken) >= len(self.pauses):
            self.exhausted = True
            return False
        pause = self.pauses[len(self.pauses_taken)]
        self.pauses_taken.append(pause)
        self._burst += 1
        self.per_minute = self.per_minute / 2 if self.per_minute else PUBLISHED_ADDS_PER_MINUTE
        self.interval = 60.0 / self.per_minute
        self._next_start = max(self._next_start, self._clock()) + pause
        return True

    def summary(self) -> str | None:
        """One line on the pauses taken (None when there were none)."""
        if not self.pauses_taken and not self.exhausted:
            return None
        times = "once" if len(self.pauses_taken) == 1 else f"{len(self.pauses_taken)} times"
        rate = f"{self.per_minute:.3g}"
        if self.exhausted:
            return (f"NotebookLM kept rate-limiting uploads: paused {times} ({sum(self.pauses_taken):g} s in all), "
                    "then gave up on the remaining adds")
        return (f"NotebookLM rate-limited uploads: paused {times} ({sum(self.pauses_taken):g} s in all) and "
                f"went on at {rate} adds per minute")
