"""The plan a run works under, as the server reports it (`usage_get`): the usage allowance, respected before a
question is sent, and the sources per notebook of the plan's tier.

- `Allowance` is the allowance as last read: read at most once per run and kept `KEEP_SECONDS` (`serve` and
  `watch` keep one across their calls), so it costs no call per question. `check` refuses a question while a
  window has nothing left (`AllowanceSpentError`, exit 8, with the time it comes back); `refused` is the same
  error for a question the server itself refused for a usage limit.
- `plan_capacity` is the tier's sources per notebook: the figure a run falls back to when no `capacity` is
  configured (50 when the server names no tier nlmsync knows).

A server without `usage_get` (an older or another one), or one whose answer cannot be read, shows nothing and
holds nothing back; a login that is needed or a connection problem stops the run as any other call would.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from nlmsync.errors import (
    AllowanceSpentError,
    AuthenticationRequiredError,
    ConnectionProblem,
    NlmsyncError,
    NotebookLMError,
    RateLimitedError,
)
from nlmsync.notebooklm import NotebookLMClient, Usage, UsageWindow

__all__ = ["DEFAULT_CAPACITY", "KEEP_SECONDS", "Allowance", "PlanCapacity", "local_time", "plan_capacity",
           "spent_error"]

KEEP_SECONDS = 60.0
DEFAULT_CAPACITY = 50
"""Sources per notebook when the plan is not known: the plan without a subscription's limit."""


def local_time(moment: datetime) -> str:
    """A reset time for a person, in local time: `15:44` today, else `Thu 19 Nov 17:44`."""
    local = moment.astimezone()
    return local.strftime("%H:%M") if local.date() == datetime.now().astimezone().date() else \
        local.strftime("%a %d %b %H:%M")


def spent_error(window: UsageWindow, held: str = "the question was not sent") -> AllowanceSpentError:
    """The error for work `held` back while `window` has nothing left, saying when the allowance comes back."""
    back = f"at {local_time(window.resets_at)}" if window.resets_at is not None else "at a time the server did not say"
    return AllowanceSpentError(
        f"the plan's usage allowance is used up (the {window.window} window has nothing left): {held}; the "
        f"allowance comes back {back}",
        window=window.window, resets_at=window.resets_at,
        hint="ask again once it is back; 'nlmsync server-info' shows what is left of each window")


class Allowance:
    """The plan's usage allowance as last read (see the module docstring); `clock` is injectable."""

    def __init__(self, *, keep_for: float = KEEP_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.keep_for = keep_for
        self._clock = clock
        self._read_at: float | None = None
        self._usage: Usage | None = None

    async def read(self, client: NotebookLMClient, *, fresh: bool = False) -> Usage | None:
        """The allowance and tier (None: the server does not say), read again only when `fresh` or older than
        `keep_for`.

        Raises:
            AuthenticationRequiredError: the server needs a login it could not renew.
            ConnectionProblem: the server (or Google, behind it) could not be reached.
        """
        if not fresh and self._read_at is not None and self._clock() - self._read_at < self.keep_for:
            return self._usage
        try:
            usage = await client.usage()
        except (AuthenticationRequiredError, ConnectionProblem):
            raise
        except NotebookLMError:
            usage = None
        self._usage, self._read_at = usage, self._clock()
        return usage

    async def check(self, client: NotebookLMClient) -> None:
        """Refuse a question while a window of the allowance has nothing left.

        Raises:
            AllowanceSpentError: a window is used up (exit 8): when it comes back is in the error.
            AuthenticationRequiredError, ConnectionProblem: as `read`.
        """
        usage = await self.read(client)
        window = usage.spent_window() if usage is not None else None
        if window is not None:
            raise spent_error(window)

    async def refused(self, client: NotebookLMClient, exc: RateLimitedError) -> AllowanceSpentError:
        """The error for a question the server refused for a usage limit (`exc`, RESOURCE_EXHAUSTED): the
        allowance read again says which window is spent and when it comes back; when none is (a burst of
        questions, or a server that does not report its allowance), the server's own words, to wait and ask
        again. Either way exit 8: nothing was answered, and the sources the question needed stay uploaded."""
        try:
            usage = await self.read(client, fresh=True)
        except NlmsyncError:  # the allowance cannot be read now: the refusal is said as the server said it
            usage = None
        window = usage.spent_window() if usage is not None else None
        if window is not None:
            return spent_error(window, "NotebookLM refused the question")
        return AllowanceSpentError(
            f"NotebookLM refused the question: a usage limit was reached ({exc})",
            hint="wait a few minutes and ask again; 'nlmsync server-info' shows what is left of the plan's "
                 "allowance")


@dataclass(frozen=True)
class PlanCapacity:
    """Sources per notebook by the plan: `plan` names it (Standard, Plus, Pro, Ultra), None when the server does
    not say or names a tier nlmsync does not know (`capacity` is then `DEFAULT_CAPACITY`)."""

    capacity: int
    plan: str | None
    tier: str | None


async def plan_capacity(client: NotebookLMClient, allowance: Allowance) -> PlanCapacity:
    """The sources per notebook of the plan the server reports: the default a run falls back to when no
    `capacity` is configured.

    Raises:
        AuthenticationRequiredError, ConnectionProblem: as `Allowance.read`.
    """
    usage = await allowance.read(client)
    if usage is None:
        return PlanCapacity(DEFAULT_CAPACITY, None, None)
    plan = usage.plan
    return PlanCapacity(plan.capacity or DEFAULT_CAPACITY, plan.name, usage.tier)
