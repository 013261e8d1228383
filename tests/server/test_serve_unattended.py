"""`serve` unattended: the notebook tools wait for a login made elsewhere (answering a clear error meanwhile) and
go on by themselves, and a question is not sent while the plan's usage allowance is used up."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from tests.held_sleep import HeldSleep
from tests.server.answers import first_text

from nlmsync.app.login_wait import RETRY_SECONDS
from nlmsync.config import Settings
from nlmsync.fake import FakeNotebookLM, Faults, build_fake_server
from nlmsync.server import serving

pytestmark = pytest.mark.anyio

QUESTION = {"question": "How does heapsort build the heap?"}


async def test_the_notebook_tools_wait_for_a_login_made_elsewhere_and_answer_again_by_themselves(vault: Path):
    fake = FakeNotebookLM(faults=Faults(expire_login_after=0, renewal_fails=True, login_back_after=3))
    tries = HeldSleep()
    settings = Settings(vault=vault, notebook="new:Serve", server="fake")
    with serving(settings, notebook_server=build_fake_server(fake), warn=tries.say, sleep=tries.sleep) as server:
        async with Client(server) as client:
            with anyio.fail_after(60):
                first = await client.call_tool("ask_notebook", QUESTION)
                assert first.is_error and "Google login" in first_text(first)
                await tries.until(lambda: tries.asked)  # waiting: refresh_auth is tried after a pause
                calls = len(fake.calls)
                meanwhile = await client.call_tool("refresh_notebook", {})
                assert meanwhile.is_error and "waiting for a Google login" in first_text(meanwhile)
                assert len(fake.calls) == calls  # answered without asking the server
                tries.tick()  # refresh_auth's second call: no login yet
                await tries.until(lambda: len(tries.asked) == 2)
                tries.tick()  # the third finds the login made elsewhere
                await tries.until(lambda: any("works again" in line for line in tries.said))
                again = await client.call_tool("ask_notebook", QUESTION)
    assert not again.is_error, again.content
    assert tries.asked == [RETRY_SECONDS, RETRY_SECONDS]
    assert len([line for line in tries.said if "wait for a Google login" in line]) == 1  # said once
    assert [c.tool for c in fake.calls].count("refresh_auth") == 3


async def test_ask_notebook_is_refused_while_the_allowance_is_used_up(vault: Path):
    fake = FakeNotebookLM(faults=Faults(usage_used={"weekly": 100.0}, tier="NOTEBOOKLM_TIER_PRO_CONSUMER_USER"))
    settings = Settings(vault=vault, notebook="new:Serve", server="fake")
    with serving(settings, notebook_server=build_fake_server(fake)) as server:
        async with Client(server) as client:
            refused = await client.call_tool("ask_notebook", QUESTION)
            again = await client.call_tool("ask_notebook", QUESTION)
    text = first_text(refused)
    assert refused.is_error and "allowance is used up" in text and "weekly" in text and "comes back at" in text
    assert again.is_error
    tools = [c.tool for c in fake.calls]
    assert "notebook_query" not in tools and "source_add" not in tools  # nothing sent for a refused question
    assert tools.count("usage_get") == 1  # read once, kept across the calls
