"""Waiting for a login made elsewhere: what the long-running commands (`watch --refresh`, `serve`) do when the
Google login expired and the server could not renew it.

They do not stop. They say so once, keep what they were asked to do, and try `refresh_auth` every
`RETRY_SECONDS` (a minute at most) until a login works again — one made with `nlm login` in another terminal,
or fresh cookies the server reads — then go on by themselves. `sleep` is injectable, so a test waits for no
clock.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from nlmsync.errors import AuthenticationRequiredError, NotebookLMError
from nlmsync.notebooklm import login_command

__all__ = ["RETRY_SECONDS", "LoginWait", "Sleep"]

RETRY_SECONDS = 60.0

Sleep = Callable[[float], Awaitable[None]]


class LoginWait:
    """Whether a long-running command waits for a login, and the waiting itself (see the module docstring)."""

    def __init__(self, *, retry_every: float = RETRY_SECONDS, sleep: Sleep = anyio.sleep) -> None:
        self.retry_every = retry_every
        self._sleep = sleep
        self.expired: AuthenticationRequiredError | None = None
        """The error that started the wait; None when the login works."""
        self.tries = 0

    @property
    def waiting(self) -> bool:
        return self.expired is not None

    def lost(self, expired: AuthenticationRequiredError) -> bool:
        """Note that the login expired and could not be renewed; True the first time (the moment to say so)."""
        first = self.expired is None
        self.expired = expired
        return first

    def refusal(self) -> AuthenticationRequiredError:
        """What a call answers while the wait lasts, without asking the server."""
        said = self.expired.message if self.expired is not None else "the server needs a Google login"
        return AuthenticationRequiredError(
            f"waiting for a Google login: {said}; refresh_auth is tried again every {self.retry_every:g} s",
            hint=f"run {login_command()} in a terminal (or give the server fresh NOTEBOOKLM_COOKIES): nlmsync goes "
                 "on by itself once the login works")

    async def wait(self, renew: Callable[[], Awaitable[object]]) -> None:
        """Try `renew` (`refresh_auth`) every `retry_every` seconds until it works; the wait is then over. A try
        that fails in any other way (a connection problem …) counts as a failed one too."""
        while True:
            await self._sleep(self.retry_every)
            self.tries += 1
            try:
                await renew()
            except NotebookLMError:
                continue
            self.expired = None
            return
