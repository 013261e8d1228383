"""An expired login renewed with `refresh_auth` and the call sent once more, against the in-process fake: how
often, for which calls, and what a renewal that fails says."""

from __future__ import annotations

import anyio
import pytest

from nlmsync.config import Settings
from nlmsync.errors import AuthenticationRequiredError, ConnectionLostError, exit_code_for
from nlmsync.fake import ErrorRule, FakeNotebookLM, Faults, build_fake_server
from nlmsync.fake.account import EXPIRED_ERROR
from nlmsync.fake.faults import LOGIN_COUNTER
from nlmsync.fake.replies import AUTH_ERROR
from nlmsync.notebooklm import connect
from nlmsync.notebooklm.login import MAX_RENEWALS

pytestmark = pytest.mark.anyio

# What the real refresh_auth answers when the server is given NOTEBOOKLM_COOKIES (notebooklm_tools/mcp/tools/auth.py)
COOKIES_SET = ("NOTEBOOKLM_COOKIES is set as an environment variable in your MCP config. This overrides all other "
               "auth sources (auth.json, nlm login, save_auth_tokens). To fix: update the cookie value in your MCP "
               "config file (e.g. claude_desktop_config.json) and restart, or remove the NOTEBOOKLM_COOKIES env var "
               "and use 'nlm login' instead.")


def _seeded(faults: Faults, *, expired: bool = False) -> tuple[FakeNotebookLM, str]:
    """A fake holding one notebook; with `expired`, its login has been used up (a renewed one lasts
    `faults.expire_login_after` calls)."""
    fake = FakeNotebookLM()
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    fake.calls.clear()
    fake.faults = faults
    if expired:
        fake.counters[LOGIN_COUNTER] = faults.expire_login_after or 0
    return fake, nb


def _calls(fake: FakeNotebookLM) -> list[tuple[str, str]]:
    return [(c.tool, c.status) for c in fake.calls]


async def test_an_expired_login_is_renewed_and_the_call_sent_once_more() -> None:
    fake, nb = _seeded(Faults(expire_login_after=1))
    async with connect(build_fake_server(fake), Settings()) as client:
        await client.notebook_get(nb)
        details = await client.notebook_get(nb)
    assert details.notebook.id == nb
    assert _calls(fake) == [("notebook_get", "success"), ("notebook_get", "error"), ("refresh_auth", "success"),
                            ("notebook_get", "success")]
    assert client.login.renewals == 0  # the renewal helped: the count starts again


async def _concurrent_gets(fake: FakeNotebookLM, nb: str, count: int) -> int:
    """`count` notebook_get calls at once on one client; how many answered."""
    async with connect(build_fake_server(fake), Settings()) as client:
        results = []

        async def get() -> None:
            results.append(await client.notebook_get(nb))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(count):
                    tg.start_soon(get)
    return len(results)


async def test_concurrent_calls_that_meet_one_expiry_share_one_renewal() -> None:
    fake, nb = _seeded(Faults(expire_login_after=10), expired=True)
    assert await _concurrent_gets(fake, nb, 4) == 4
    assert [t for t, _ in _calls(fake)].count("refresh_auth") == 1


async def test_a_renewal_that_failed_is_not_tried_again_by_every_later_call() -> None:
    fake, nb = _seeded(Faults(expire_login_after=0, renewal_fails=True))
    async with connect(build_fake_server(fake), Settings()) as client:
        for _ in range(3):
            with pytest.raises(AuthenticationRequiredError) as info:
                await client.notebook_get(nb)
    assert exit_code_for(info.value) == 5
    assert info.value.message == "reading the notebook: the NotebookLM server needs a Google login (Authentication expired)"
    assert info.value.hint is not None and "nlm login" in info.value.hint and "could not be renewed" in info.value.hint
    assert [t for t, _ in _calls(fake)] == ["notebook_get", "refresh_auth", "notebook_get", "notebook_get"]


async def test_a_login_that_keeps_expiring_is_renewed_as_long_as_each_renewal_helps() -> None:
    fake, nb = _seeded(Faults(expire_login_after=1), expired=True)
    async with connect(build_fake_server(fake), Settings()) as client:
        for _ in range(3 * MAX_RENEWALS):
            await client.notebook_get(nb)  # each renewed: the login lasts one call, and that call goes through
    assert [t for t, _ in _calls(fake)].count("refresh_auth") == 3 * MAX_RENEWALS


async def test_renewals_that_no_call_could_use_stop_after_a_few_in_a_row() -> None:
    fake, nb = _seeded(Faults(errors=[ErrorRule("notebook_get", EXPIRED_ERROR)]))  # renewed, and expired at once
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(AuthenticationRequiredError) as info:
            await client.notebook_get(nb)
    assert [t for t, _ in _calls(fake)].count("refresh_auth") == MAX_RENEWALS
    assert info.value.hint is not None and f"renewed {MAX_RENEWALS} times in a row" in info.value.hint
    assert "nlm login" in info.value.hint


async def test_calls_sent_again_on_a_renewed_login_that_others_used_up_are_renewed_again() -> None:
    fake, nb = _seeded(Faults(expire_login_after=2), expired=True)
    assert await _concurrent_gets(fake, nb, 8) == 8


async def test_with_cookies_in_the_environment_the_hint_says_to_renew_them() -> None:
    fake, nb = _seeded(Faults(errors=[ErrorRule("notebook_get", EXPIRED_ERROR), ErrorRule("refresh_auth", COOKIES_SET)]))
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(AuthenticationRequiredError) as info:
            await client.notebook_get(nb)
    assert info.value.hint is not None
    assert "NOTEBOOKLM_COOKIES is set for the server" in info.value.hint and "fresh cookies" in info.value.hint


async def test_a_server_with_no_login_at_all_is_not_asked_to_renew() -> None:
    fake, nb = _seeded(Faults(errors=[ErrorRule("notebook_get", AUTH_ERROR)]))
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(AuthenticationRequiredError):
            await client.notebook_get(nb)
    assert _calls(fake) == [("notebook_get", "error")]


async def test_an_add_that_waited_for_processing_is_an_answer_lost_after_the_renewal() -> None:
    """It may have been made before the wait met the expired login: a listing settles it, not a resend."""
    fake, nb = _seeded(Faults(expire_login_after=1), expired=True)
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(ConnectionLostError) as caught:
            await client.source_add_text(nb, "Heapsort.", "a.md · 01", wait=True)
        assert caught.value.message == ("uploading to the notebook: the login expired while the add waited for "
                                        "processing; it was renewed, and whether the source was added is not known")
        added = await client.source_add_text(nb, "Quicksort.", "b.md · 02", wait=False)
    assert [t for t, _ in _calls(fake)] == ["source_add", "refresh_auth", "source_add"]  # the first not sent again
    assert [s.title for s in fake.notebooks[nb].sources.values()] == [added.title]


async def test_refresh_auth_answering_expired_is_a_login_error() -> None:
    """The real refresh_auth answers a login it could not renew with status "expired", not "error"."""
    fake, _ = _seeded(Faults(expire_login_after=0, renewal_fails=True))
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(AuthenticationRequiredError) as info:
            await client.refresh_auth()
    assert "nlm login" in info.value.raw
    assert fake.calls[-1].status == "expired"


async def test_usage_from_a_server_without_usage_get_is_none_and_renewing_falls_back_to_a_listing() -> None:
    fake, _ = _seeded(Faults(without_tools=frozenset({"usage_get", "refresh_auth"})))
    async with connect(build_fake_server(fake), Settings()) as client:
        assert await client.usage() is None
        renewed = await client.renew_login()
    assert renewed.message
    assert [t for t, _ in _calls(fake)] == ["notebook_list"]  # the unknown tools never reach the fake's logic


async def test_renew_login_starts_a_new_count_of_renewals() -> None:
    fake, nb = _seeded(Faults(errors=[ErrorRule("notebook_get", EXPIRED_ERROR)]))  # renewed, and expired at once
    async with connect(build_fake_server(fake), Settings()) as client:
        with pytest.raises(AuthenticationRequiredError):
            await client.notebook_get(nb)
        assert client.login.renewals == MAX_RENEWALS and client.login.failure is not None
        fake.faults = Faults()  # a login made elsewhere
        await client.renew_login()
        assert client.login.renewals == 0 and client.login.failure is None
        await client.notebook_get(nb)
