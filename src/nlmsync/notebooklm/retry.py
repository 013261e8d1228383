"""The MCP retry policy (spec §10) and the client-side rate limit for adds.

§10: execute once; on failure retry only when the failure is a connection problem AND the call is
idempotent AND retrying on connection issues is not disabled. Read-only tools are idempotent; `source_add`,
`source_delete`, `notebook_create`, `notebook_query` (and every other mutating tool) are never retried —
a failed mutation is recovered by reconciliation, never by a blind retry. Retries use tenacity with
bounded exponential backoff and jitter; `sleep` is injectable so tests never wait.
"""

from __future__ import annotations

import math
import time
from collections.abc import Awaitable, Callable
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
                              "source_describe"})
BACKOFF_MULTIPLIER = 0.5
BACKOFF_MAX = 8.0
BACKOFF_JITTER = 0.5

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


def is_retryable(exc: BaseException, *, idempotent: bool, retry_on_connection_issue: bool) -> bool:
    """§10 step 2: a connection problem, on an idempotent call, with retrying not disabled."""
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
    """Spaces `source_add` calls to at most `per_minute` starts per minute (None = no limit).

    `clock` and `sleep` are injectable; concurrent callers queue on one lock.
    """

    def __init__(self, per_minute: float | None, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Sleep = anyio.sleep) -> None:
        self.interval = 60.0 / per_minute if per_minute else 0.0
        self._clock = clock
        self._sleep = sleep
        self._next_start = -math.inf
        self._lock = anyio.Lock()

    async def wait_turn(self) -> None:
        """Return when the next add may start."""
        if self.interval <= 0:
            return
        async with self._lock:
            delay = self._next_start - self._clock()
            if delay > 0:
                await self._sleep(delay)
            self._next_start = max(self._clock(), self._next_start) + self.interval
