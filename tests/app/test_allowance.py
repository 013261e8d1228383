"""The plan a run works under: the usage allowance, read once and respected before a question is sent, and the
sources per notebook of the plan's tier when no capacity is configured — against the in-process fake."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta

import pytest

from nlmsync.app import Allowance, Orchestrator, local_time
from nlmsync.app.allowance import spent_error
from nlmsync.config import Settings
from nlmsync.errors import AllowanceSpentError, exit_code_for
from nlmsync.fake import ErrorRule, Faults, RateLimitRule, build_fake_server
from nlmsync.notebooklm import UsageWindow, connect
from nlmsync.store import StateStore
from nlmsync.sync import Branch

pytestmark = pytest.mark.anyio

PRO = "NOTEBOOKLM_TIER_PRO_CONSUMER_USER"


@asynccontextmanager
async def unconfigured(world, **settings: object) -> AsyncIterator[Orchestrator]:
    """An orchestrator over `world` whose settings leave `capacity` unset (the world's runs set it)."""
    given = {key: getattr(world.settings, key) for key in world.settings.model_fields_set if key != "capacity"}
    config = Settings(**{**given, **settings})
    store = StateStore.open(config.state_path, config)
    try:
        async with connect(build_fake_server(world.fake), config) as client:
            yield Orchestrator(config, store, client)
    finally:
        store.close()


async def test_with_no_capacity_set_a_run_takes_the_plans(make_world):
    world = make_world(capacity=300)
    world.fake.faults = Faults(tier=PRO)
    for name in "ab":
        world.write(f"{name}.md", name)
    async with unconfigured(world) as orch:
        report = await orch.refresh(["a.md", "b.md"])
        status = await orch.status()
    assert report.capacity == 300
    assert (status.capacity, status.capacity_source, status.plan) == (300, "plan", "Pro")
    assert status.allowance is not None and status.allowance.tier == PRO
    assert world.calls("usage_get") == 1  # read once for the run, whatever asks for it


@pytest.mark.parametrize(("faults", "source"), [
    (Faults(tier="NOTEBOOKLM_TIER_ENTERPRISE_SEAT"), "default"),  # a tier nlmsync does not know
    (Faults(without_tools=frozenset({"usage_get"})), "default"),  # an older server
    (Faults(errors=[ErrorRule("usage_get", "Gemini Notebook returned no usage information.")]), "default"),
    (Faults(tier=None), "plan"),  # no subscription: the Standard plan's 50
])
async def test_a_plan_not_known_falls_back_to_50(make_world, faults: Faults, source: str):
    world = make_world()
    world.fake.faults = faults
    async with unconfigured(world) as orch:
        status = await orch.status()
    assert (status.capacity, status.capacity_source) == (50, source)


async def test_a_capacity_set_is_the_users_word_and_costs_no_usage_read(make_world):
    world = make_world(capacity=300)
    world.fake.faults = Faults(tier=PRO)
    world.write("a.md", "a")
    async with unconfigured(world, capacity=7) as orch:
        report = await orch.refresh(["a.md"])
    assert report.capacity == 7 and world.calls("usage_get") == 0


async def test_ask_sends_no_question_while_a_window_is_used_up(make_world):
    world = make_world()
    now = datetime.now(UTC).replace(microsecond=0)
    world.fake.clock = now.timestamp
    world.fake.faults = Faults(usage_used={"weekly": 100.0})
    world.write("heap.md", "# Heapsort\nHeapsort builds a binary heap.\n")
    async with world.run() as orch:
        with pytest.raises(AllowanceSpentError) as info:
            await orch.ask("How does heapsort work?")
        assert orch.store.all_mappings(world.notebook_id) == []
    error = info.value
    assert exit_code_for(error) == 8 and error.window == "weekly"
    assert error.resets_at == now + timedelta(days=7)
    assert f"comes back at {local_time(now + timedelta(days=7))}" in error.message and "not sent" in error.message
    assert world.mutating_calls() == []  # nothing uploaded, no question


async def test_ask_goes_on_while_something_is_left_and_without_usage_get(make_world):
    world = make_world()
    world.write("heap.md", "# Heapsort\nHeapsort builds a binary heap.\n")
    world.fake.faults = Faults(usage_used={"rolling": 99.0, "weekly": 40.0})
    async with world.run() as orch:
        first = await orch.ask("How does heapsort work?")
    world.fake.faults = Faults(without_tools=frozenset({"usage_get"}))
    async with world.run() as orch:
        second = await orch.ask("And its worst case?")
    assert first.answer and second.answer
    assert [n.branch for n in first.notes] == [Branch.ADDED]


async def test_the_allowance_is_kept_briefly_then_read_again(make_world):
    world = make_world()
    world.fake.clock = lambda: 1_800_000_000.0  # the reset times it reports do not move between reads
    now = [0.0]
    allowance = Allowance(keep_for=60.0, clock=lambda: now[0])
    async with world.run() as orch:
        first = await allowance.read(orch.client)
        now[0] = 59.0
        kept = await allowance.read(orch.client)
        now[0] = 61.0
        again = await allowance.read(orch.client)
        fresh = await allowance.read(orch.client, fresh=True)
    assert first == kept == again == fresh and first is not None
    assert world.calls("usage_get") == 3  # the first, after a minute, and the one asked fresh


async def test_a_capacity_given_before_for_the_notebook_wins_over_the_plan(make_world):
    world = make_world(capacity=300)
    world.fake.faults = Faults(tier=PRO)
    world.write("a.md", "a")
    async with unconfigured(world, capacity=7) as orch:
        await orch.refresh(["a.md"])
    world.write("b.md", "b")
    async with unconfigured(world) as orch:
        report = await orch.refresh(["b.md"])
    assert (report.capacity, report.capacity_source) == (7, "remembered")
    assert world.calls("usage_get") == 0  # the user's word wins: the plan is not read for a refresh
    async with unconfigured(world) as orch:
        status = await orch.status()
    assert (status.capacity, status.capacity_source, status.plan) == (7, "remembered", "Pro")


async def test_a_question_refused_for_a_usage_limit_is_exit_8_with_the_window_read_again(make_world):
    """`serve` and `watch` keep the allowance a minute: a window used up since it was read lets the question go,
    NotebookLM refuses it (RESOURCE_EXHAUSTED), and the allowance read again says which window and when."""
    world = make_world()
    now = datetime.now(UTC).replace(microsecond=0)
    world.fake.clock = now.timestamp
    world.write("heap.md", "# Heapsort\nHeapsort builds a binary heap.\n")
    allowance = Allowance(keep_for=3600.0)
    async with world.run() as orch:
        orch.allowance = allowance
        await orch.ask("How does heapsort work?")
        world.fake.faults = Faults(usage_used={"rolling": 100.0})
        with pytest.raises(AllowanceSpentError) as info:
            await orch.ask("And its worst case?")
        turns = orch.store.query_records(world.notebook_id, orch.store.latest_conversation(world.notebook_id) or "")
    error = info.value
    assert exit_code_for(error) == 8 and error.window == "rolling"
    assert error.resets_at == now + timedelta(hours=5)
    assert error.message.startswith("the plan's usage allowance is used up (the rolling window has nothing left): "
                                    "NotebookLM refused the question")
    assert world.calls("notebook_query") == 2 and world.calls("usage_get") == 2  # the kept read, then a fresh one
    assert [t.question for t in turns] == ["How does heapsort work?"]  # the refused question is not recorded


@pytest.mark.parametrize("faults", [Faults(rate_limits=[RateLimitRule("notebook_query")]),
                                    Faults(rate_limits=[RateLimitRule("notebook_query")],
                                           without_tools=frozenset({"usage_get"})),
                                    Faults(rate_limits=[RateLimitRule("notebook_query")],
                                           errors=[ErrorRule("usage_get", "Internal error")])],
                         ids=["allowance-left", "without-usage_get", "usage_get-failing"])
async def test_a_question_refused_for_a_usage_limit_with_allowance_left_says_to_wait(make_world, faults: Faults):
    world = make_world()
    world.fake.faults = faults
    world.write("heap.md", "# Heapsort\nHeapsort builds a binary heap.\n")
    async with world.run() as orch:
        with pytest.raises(AllowanceSpentError) as info:
            await orch.ask("How does heapsort work?")
        held = [m.path for m in orch.store.all_mappings(world.notebook_id)]
    error = info.value
    assert exit_code_for(error) == 8 and error.window == "" and error.resets_at is None
    assert error.message.startswith("NotebookLM refused the question: a usage limit was reached (asking the notebook: ")
    assert error.hint == ("wait a few minutes and ask again; 'nlmsync server-info' shows what is left of the plan's "
                          "allowance")
    assert held == ["heap.md"]  # the note uploaded for the question stays, recorded


@pytest.mark.parametrize("resets", [datetime(2026, 11, 29, 14, 30, tzinfo=UTC), None],
                         ids=["reset-known", "reset-unknown"])
def test_a_spent_window_says_what_was_held_back_and_when_the_allowance_comes_back(resets: datetime | None) -> None:
    error = spent_error(UsageWindow(window="weekly", percent_remaining=0, resets_at=resets), "2 notes were not uploaded")
    back = f"at {local_time(resets)}" if resets is not None else "at a time the server did not say"
    assert str(error) == ("the plan's usage allowance is used up (the weekly window has nothing left): 2 notes were "
                          f"not uploaded; the allowance comes back {back}")
    assert error.hint == "ask again once it is back; 'nlmsync server-info' shows what is left of each window"
    assert (error.window, error.resets_at) == ("weekly", resets)
    asked = spent_error(UsageWindow(window="rolling", percent_remaining=0, resets_at=resets))  # a question held back
    assert str(asked).startswith("the plan's usage allowance is used up (the rolling window has nothing left): the "
                                 "question was not sent; the allowance comes back ")


def test_a_reset_time_today_is_the_time_alone_and_a_later_day_names_the_day() -> None:
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    local = now.astimezone()
    assert local_time(now) == f"{local.hour:02}:{local.minute:02}"
    later = (now + timedelta(days=3)).astimezone()
    day = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[later.weekday()]
    month = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")[later.month - 1]
    assert local_time(now + timedelta(days=3)) == f"{day} {later.day:02} {month} {later.hour:02}:{later.minute:02}"
