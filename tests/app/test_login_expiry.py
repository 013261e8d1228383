"""A login that expires during a run: renewed with `refresh_auth` and the call sent once more, a few times a run
at most; when renewing fails the run stops with exit 5, every finished upload recorded, and the next run does
only the rest (against the in-process fake server and the real state store)."""

from __future__ import annotations

import pytest
from tests.app.world import stopped_report

from nlmsync.errors import AuthenticationRequiredError
from nlmsync.fake.account import EXPIRED_ERROR
from nlmsync.fake.faults import LOGIN_COUNTER, ErrorRule, Faults
from nlmsync.notebooklm.login import MAX_RENEWALS
from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio


def branches(report):
    return {n.path: n.branch for n in report.notes}


async def test_login_lost_mid_run_stops_with_exit_5_and_reports_what_was_done(make_world):
    world = make_world()
    world.fake.faults = Faults(expire_login_after=2, renewal_fails=True)  # the listing and a.md's add, then expired
    for name in "abc":
        world.write(f"{name}.md", name)
    async with world.run(concurrency=1) as orch:
        with pytest.raises(AuthenticationRequiredError) as info:
            await orch.refresh(["a.md", "b.md", "c.md"])
        assert info.value.exit_code == 5
        assert info.value.hint is not None and "nlm login" in info.value.hint
        assert [(n.path, n.branch) for n in stopped_report(info.value).notes] == [
            ("a.md", Branch.ADDED), ("b.md", Branch.FAILED), ("c.md", Branch.FAILED)]
        assert stopped_report(info.value).notes[2].error == "not tried: the server needs a Google login"
        assert [m.path for m in orch.store.all_mappings(world.notebook_id)] == ["a.md"]
    assert world.calls("source_add") == 2  # c.md was not tried against a server that needs a login
    assert world.calls("refresh_auth") == 1  # the renewal was tried once, not once per note
    world.fake.faults = Faults()
    async with world.run(concurrency=1) as orch:  # logged in again: the next run does only the rest
        again = await orch.refresh(["a.md", "b.md", "c.md"])
    assert branches(again) == {"a.md": Branch.REUSED, "b.md": Branch.ADDED, "c.md": Branch.ADDED}


async def test_a_login_that_expires_mid_run_is_renewed_and_the_call_sent_again(make_world):
    world = make_world()
    world.fake.faults = Faults(expire_login_after=2)
    for name in "abc":
        world.write(f"{name}.md", name)
    async with world.run(concurrency=1) as orch:
        report = await orch.refresh(["a.md", "b.md", "c.md"])
    assert branches(report) == {"a.md": Branch.ADDED, "b.md": Branch.ADDED, "c.md": Branch.ADDED}
    assert [(c.tool, c.status) for c in world.fake.calls if c.tool in ("source_add", "refresh_auth")] == [
        ("source_add", "success"), ("source_add", "error"), ("refresh_auth", "success"), ("source_add", "success"),
        ("source_add", "success"), ("refresh_auth", "success")]  # the last: for the listing that checks the run
    assert sorted(world.remote().values()) == sorted(m.title for m in world.store().all_mappings(world.notebook_id))
    world.close()


async def test_an_add_that_waited_for_processing_and_met_an_expired_login_is_settled_by_a_listing(make_world):
    """The add may have been made before the wait met the expired login: the run lists the notebook, finds no
    source with the note's title, and adds it then — once."""
    world = make_world()
    world.fake.faults = Faults(expire_login_after=3)
    world.fake.counters[LOGIN_COUNTER] = 2  # the listing is the login's last call: the add meets it expired
    world.write("a.md", "alpha")
    async with world.run(wait_for_processing=True) as orch:
        report = await orch.refresh(["a.md"])
    assert branches(report) == {"a.md": Branch.ADDED}
    tools = [c.tool for c in world.fake.calls]
    # the last listing checks, before the run says it is done, that no other device deleted what it counts on
    assert tools == ["notebook_get", "source_add", "refresh_auth", "notebook_get", "source_add", "notebook_get"]
    assert len(world.remote()) == 1


async def test_a_login_renewed_after_every_call_still_lets_the_run_finish(make_world):
    """A login that expires after every call is renewed as often: each renewal lets a call through."""
    world = make_world()
    world.fake.faults = Faults(expire_login_after=1)
    names = [f"note-{i}" for i in range(3 * MAX_RENEWALS)]
    for name in names:
        world.write(f"{name}.md", name)
    async with world.run() as orch:
        report = await orch.refresh([f"{name}.md" for name in names])
    assert branches(report) == {f"{name}.md": "added" for name in names}
    assert world.calls("refresh_auth") > MAX_RENEWALS


async def test_renewals_no_call_could_use_stop_the_run_with_a_hint_that_says_so(make_world):
    """A renewed login that expires before any call can use it is renewed a few times in a row, then the run stops
    (exit 5), its report and its line counting the notes alike."""
    world = make_world()
    for name in "abc":
        world.write(f"{name}.md", name)
    async with world.run() as orch:
        await orch.refresh(["a.md"])
    world.fake.faults = Faults(errors=[ErrorRule("source_add", EXPIRED_ERROR)])
    async with world.run(concurrency=1) as orch:
        with pytest.raises(AuthenticationRequiredError) as info:
            await orch.refresh(["a.md", "b.md", "c.md"])
    assert world.calls("refresh_auth") == MAX_RENEWALS
    assert info.value.hint is not None and f"renewed {MAX_RENEWALS} times in a row" in info.value.hint
    report = stopped_report(info.value)
    assert report.counts() == {"reused": 1, "failed": 1, "not tried": 1}
    assert info.value.message.endswith("; 1 of 3 notes done, 1 failed, 1 not tried")
