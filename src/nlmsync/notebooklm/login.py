"""Renewing an expired Google login with the server's `refresh_auth`, a few times a run at most.

When a call answers that the login expired (`AuthenticationRequiredError`), the client asks the server to renew
it (`refresh_auth`: the login saved on disk, which `nlm login` in another terminal may have replaced, or a fresh
one from the saved browser profile) and sends the call once more. A refusal for an expired login is a definite
"not done" — the server checks the login before it acts — so resending cannot do a thing twice; the one
exception is an add that waits for processing (`source_add` with `wait`), which may have been made before the
wait met the expired login: it is settled as an answer lost (the sync's fresh listing finds it or not).

A server that has no login at all ("No authentication found") is not asked: it reads a login saved on disk
by itself, so there is nothing to renew.

`LoginRenewal` keeps the count: concurrent calls that meet the same expiry share one renewal, a call that meets
an expired login again after a renewal (the renewed login used up by other calls) is renewed again, and a
renewal that failed is not tried again by every later call of the run. A renewal that helped (a call made on
the renewed login went through) starts the count again: a long run on a login that lasts a while renews as often
as it expires, while after `MAX_RENEWALS` renewals in a row that no call could use the run stops — such a login
needs a person. A long-running command that waited for a login made elsewhere starts a new count (`restart`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import regex

from nlmsync.errors import AuthenticationRequiredError, ConnectionProblem, NotebookLMError
from nlmsync.notebooklm.transports import login_command

__all__ = ["LOGIN_TOOLS", "MAX_RENEWALS", "LoginRenewal", "renewable", "renewal_failed_hint"]

# Renewals in a row, none of them used by a call, a client makes before it stops asking: a login that expires
# as soon as it is renewed needs a person.
MAX_RENEWALS = 3
# The tools about the login itself: their own "needs a login" answer is never renewed.
LOGIN_TOOLS = frozenset({"refresh_auth", "server_info"})

_COOKIES = ("NOTEBOOKLM_COOKIES is set for the server and overrides 'nlm login': put fresh cookies in it "
            "(from a browser signed in to notebooklm.google.com), then run nlmsync again")


_NO_LOGIN = regex.compile(r"no authentication found|no cached tokens", regex.I)


def renewable(expired: AuthenticationRequiredError) -> bool:
    """Whether the login the server needs is one that expired (rather than none at all)."""
    return not _NO_LOGIN.search(expired.raw)


def renewal_failed_hint(said: str) -> str:
    """What to do once `refresh_auth` could not renew the login (`said`: its answer)."""
    if "NOTEBOOKLM_COOKIES" in said:
        return f"the login could not be renewed: {_COOKIES}"
    return (f"the login could not be renewed: {_login_again()} (a server given NOTEBOOKLM_COOKIES needs fresh "
            "cookies in it instead)")


def _login_again() -> str:
    return f"run {login_command()} in a terminal, then run nlmsync again"


class LoginRenewal:
    """How many times this client renewed the login, and whether renewing failed (see the module docstring)."""

    def __init__(self, limit: int = MAX_RENEWALS) -> None:
        self.limit = limit
        self.renewals = 0
        """Renewals since a call last went through on the login of the moment."""
        self.generation = 0
        """Counts successful renewals: a call that started before one simply goes again."""
        self.failure: str | None = None
        """Why the login cannot be renewed, as the hint to give (renewing is not tried again until `restart`)."""
        self._lock = anyio.Lock()

    def restart(self) -> None:
        """A login made elsewhere works again: the run starts a new count."""
        self.renewals = 0
        self.failure = None
        self.generation += 1

    def worked(self, started: int) -> None:
        """A call begun at generation `started` went through: when that is the login of the moment, its renewal
        helped, and the count starts again."""
        if started == self.generation:
            self.renewals = 0

    async def renew(self, expired: AuthenticationRequiredError, started: int,
                    refresh: Callable[[], Awaitable[object]]) -> None:
        """Renew the login `expired` (met by a call begun at generation `started`), or raise `expired` with the
        way to log in as its hint.

        Raises:
            AuthenticationRequiredError: `expired`, when the login could not be renewed.
            NotebookLMError: `refresh_auth` itself could not be called (a connection problem …).
        """
        async with self._lock:
            if self.generation != started:
                return  # renewed while this call was under way
            if self.failure is None and self.renewals >= self.limit:
                self.failure = (f"the login was renewed {self.renewals} times in a row and expired each time before a "
                                f"call could use it: {_login_again()}")
            if self.failure is None:
                self.renewals += 1
                try:
                    await refresh()
                except ConnectionProblem:
                    raise
                except NotebookLMError as failed:  # refused, or any answer but a renewed login
                    self.failure = renewal_failed_hint(failed.raw)
                else:
                    self.generation += 1
                    return
            expired.hint = self.failure
            raise expired
