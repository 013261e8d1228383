"""The client against the in-process fake: the retry policy, reconnects, timeouts, exact arguments.

Dropped connections are injected behind the real interface (the fake's fault switches); backoff sleeps are
recorded by an injected `sleep`, so nothing here waits for real.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer

from nlmsync.config import Settings
from nlmsync.errors import (
    ConnectionLostError,
    ConnectionProblem,
    MalformedResponseError,
    NotFoundError,
    RateLimitedError,
    ServerError,
    ServerTimeoutError,
    exit_code_for,
)
from nlmsync.fake import (
    DropRule,
    ErrorRule,
    FakeNotebookLM,
    Faults,
    RateLimitRule,
    build_fake_server,
)
from nlmsync.notebooklm import IDEMPOTENT_TOOLS, connect
from nlmsync.notebooklm.classify import doing
from nlmsync.notebooklm.retry import BACKOFF_JITTER, BACKOFF_MULTIPLIER, AddRateLimiter, is_retryable

pytestmark = pytest.mark.anyio


def _seeded(faults: Faults | None = None) -> tuple[FakeNotebookLM, str, str]:
    """A fake holding one notebook with one source, faults armed after the seeding calls."""
    fake = FakeNotebookLM()
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    sid = fake.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": "Heapsort sorts.",
                                    "title": "a.md"})["source_id"]
    fake.counters.clear()
    fake.calls.clear()
    fake.faults = faults or Faults()
    return fake, nb, sid


def _tools_called(fake: FakeNotebookLM) -> list[tuple[str, bool, str | None]]:
    return [(c.tool, c.applied, c.dropped) for c in fake.calls]


def test_only_read_only_tools_are_idempotent() -> None:
    assert {"server_info", "notebook_get", "notebook_list", "source_get_content"} <= IDEMPOTENT_TOOLS
    assert not {"source_add", "source_delete", "notebook_create", "notebook_query", "source_rename",
                "notebook_delete"} & IDEMPOTENT_TOOLS


@pytest.mark.parametrize(("exc", "idempotent", "enabled", "expected"), [
    (ConnectionLostError("x"), True, True, True),
    (ConnectionLostError("x"), False, True, False),
    (ConnectionLostError("x"), True, False, False),
    (ServerTimeoutError("x"), True, True, True),
    (NotFoundError("x"), True, True, False),
    (RuntimeError("x"), True, True, False),
])
def test_is_retryable(exc: Exception, idempotent: bool, enabled: bool, expected: bool) -> None:
    assert is_retryable(exc, idempotent=idempotent, retry_on_connection_issue=enabled) is expected


@pytest.mark.parametrize("when", ["before", "after"])
async def test_dropped_notebook_get_is_retried_and_succeeds(sleeps: Any, when: str) -> None:
    fake, nb, sid = _seeded(Faults(drops=[DropRule(nth=1, tool="notebook_get", when=when)]))  # type: ignore[arg-type]
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        details = await client.notebook_get(nb)
        assert [s.id for s in details.sources] == [sid]
        assert client.connections_opened == 2
    assert [c.tool for c in fake.calls] == ["notebook_get", "notebook_get"]
    assert len(sleeps.delays) == 1
    assert BACKOFF_MULTIPLIER <= sleeps.delays[0] <= BACKOFF_MULTIPLIER + BACKOFF_JITTER


@pytest.mark.parametrize(("tool", "call"), [
    ("source_add", lambda c, nb, sid: c.source_add_text(nb, "Quicksort partitions.", "b.md")),
    ("source_delete", lambda c, nb, sid: c.source_delete(sid)),
    ("notebook_create", lambda c, nb, sid: c.notebook_create("Other")),
    ("notebook_query", lambda c, nb, sid: c.notebook_query(nb, "heapsort")),
    ("source_rename", lambda c, nb, sid: c.source_rename(nb, sid, "renamed")),
])
@pytest.mark.parametrize("when", ["before", "after"])
async def test_dropped_mutation_is_not_retried(sleeps: Any, tool: str, call: Any, when: str) -> None:
    fake, nb, sid = _seeded(Faults(drops=[DropRule(nth=1, tool=tool, when=when)]))  # type: ignore[arg-type]
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        with pytest.raises(ConnectionLostError) as info:
            await call(client, nb, sid)
        assert exit_code_for(info.value) == 4 and info.value.tool == tool
        assert info.value.message.startswith(f"{doing(tool)}: connection to ")  # what was being done, in words
        assert sleeps.delays == []
        assert _tools_called(fake) == [(tool, when == "after", when)]
        # The session died with the call; the next call reconnects on its own.
        await client.notebook_get(nb)
        assert client.connections_opened == 2


async def test_applied_but_lost_add_is_visible_after_reconnect(sleeps: Any) -> None:
    fake, nb, _ = _seeded(Faults(drops=[DropRule(nth=1, tool="source_add", when="after")]))
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        with pytest.raises(ConnectionLostError):
            await client.source_add_text(nb, "Quicksort partitions.", "b.md · 0001")
        titles = [s.title for s in (await client.notebook_get(nb)).sources]
    assert titles.count("b.md · 0001") == 1


async def test_retry_can_be_disabled(sleeps: Any) -> None:
    fake, nb, _ = _seeded(Faults(drops=[DropRule(nth=1, tool="notebook_get")]))
    async with connect(build_fake_server(fake), Settings(retry_on_connection_issue=False), sleep=sleeps) as client:
        with pytest.raises(ConnectionLostError):
            await client.notebook_get(nb)
    assert sleeps.delays == [] and len(fake.calls) == 1


async def test_attempts_are_bounded_with_growing_backoff(sleeps: Any) -> None:
    fake, _, _ = _seeded(Faults(drops=[DropRule(nth=n, tool="notebook_list") for n in range(1, 10)]))
    async with connect(build_fake_server(fake), Settings(retry_attempts=4), sleep=sleeps) as client:
        with pytest.raises(ConnectionLostError):
            await client.notebook_list()
    assert [c.tool for c in fake.calls] == ["notebook_list"] * 4
    assert len(sleeps.delays) == 3
    for n, delay in enumerate(sleeps.delays):
        assert BACKOFF_MULTIPLIER * 2**n <= delay <= BACKOFF_MULTIPLIER * 2**n + BACKOFF_JITTER


@pytest.mark.parametrize(("faults", "expected"), [
    (Faults(errors=[ErrorRule("notebook_get", "Notebook gone not found.")]), NotFoundError),
    (Faults(errors=[ErrorRule("notebook_get", "Something broke on the server")]), ServerError),
    (Faults(rate_limits=[RateLimitRule("notebook_get")]), RateLimitedError),
])
async def test_in_band_errors_are_never_retried(sleeps: Any, faults: Faults, expected: type) -> None:
    fake, nb, _ = _seeded(faults)
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        with pytest.raises(expected):
            await client.notebook_get(nb)
        assert client.connections_opened == 1
    assert len(fake.calls) == 1 and sleeps.delays == []


async def test_slow_call_times_out_and_the_session_is_replaced(sleeps: Any) -> None:
    fake, nb, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(retry_attempts=1), sleep=sleeps) as client:
        await client.notebook_get(nb)
        fake.faults = Faults(latency=30.0)
        with anyio.fail_after(20):
            with pytest.raises(ServerTimeoutError) as info:
                await client.call("notebook_get", {"notebook_id": nb}, timeout=0.3)
        assert exit_code_for(info.value) == 4
        fake.faults = Faults()
        await client.notebook_get(nb)
        assert client.connections_opened == 2


async def test_query_timeout_is_enforced_by_the_server_budget_and_exits_4(sleeps: Any) -> None:
    fake, nb, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        await client.server_info()
        client.settings.query_timeout = 0.3
        fake.faults = Faults(latency=30.0)
        with anyio.fail_after(10):
            with pytest.raises(ServerTimeoutError) as info:
                await client.notebook_query(nb, "heapsort")
        assert exit_code_for(info.value) == 4
        assert info.value.hint is not None and "query_timeout" in info.value.hint
        # The server answered (in-band): the session is alive, and a query is never retried.
        assert client.connections_opened == 1
    assert _tools_called(fake)[-1] == ("notebook_query", False, None)
    assert fake.calls[-1].arguments["timeout"] == 0.3
    assert sleeps.delays == []


async def test_call_timeout_holds_reads_but_not_queries(sleeps: Any) -> None:
    fake, nb, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(retry_attempts=1), sleep=sleeps) as client:
        await client.server_info()
        client.settings.call_timeout = 0.3
        client.settings.query_timeout = 20.0
        fake.faults = Faults(latency=0.6)
        with anyio.fail_after(20):
            answer = await client.notebook_query(nb, "heapsort")
            assert answer.sources_used
            with pytest.raises(ServerTimeoutError) as info:
                await client.notebook_get(nb)
        assert exit_code_for(info.value) == 4
        assert "0.3 s" in info.value.message
        assert info.value.hint is not None and "call_timeout" in info.value.hint


async def test_exact_wire_arguments(sleeps: Any) -> None:
    fake, nb, sid = _seeded()
    async with connect(build_fake_server(fake), Settings(wait_for_processing=True), sleep=sleeps) as client:
        await client.source_add_text(nb, "text", "t")
        await client.notebook_query(nb, "q", source_ids=[sid], timeout=42.0)
        await client.source_delete(sid)
    add, query, delete = (c.arguments for c in fake.calls)
    assert add["source_type"] == "text" and add["wait"] is True and add["title"] == "t"
    assert add["wait_timeout"] == Settings().call_timeout
    assert query["source_ids"] == [sid] and query["timeout"] == 42.0 and query["conversation_id"] is None
    assert delete["source_id"] == sid and delete["confirm"] is True


async def test_concurrent_calls_share_one_session(sleeps: Any) -> None:
    fake, nb, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        async with anyio.create_task_group() as tg:
            for i in range(6):
                tg.start_soon(client.source_add_text, nb, f"text {i}", f"t{i}")
        assert client.connections_opened == 1
        assert len((await client.notebook_get(nb)).sources) == 7


async def test_errors_leave_connect_unwrapped() -> None:
    fake, _, _ = _seeded()
    with pytest.raises(NotFoundError):
        async with connect(build_fake_server(fake), Settings()) as client:
            await client.notebook_get("missing")


async def test_malformed_result_names_the_field() -> None:
    server = MCPServer("broken")

    @server.tool()
    def notebook_get(notebook_id: str) -> dict[str, Any]:
        return {"status": "success", "notebook": {"id": notebook_id, "title": "T"}, "sources": [{"id": "s"}]}

    async with connect(server, Settings()) as client:
        with pytest.raises(MalformedResponseError, match=r"'sources\.0\.title' missing"):
            await client.notebook_get("n")


async def test_add_rate_limiter_spaces_adds() -> None:
    now = [100.0]
    waited: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waited.append(seconds)
        now[0] += seconds

    limiter = AddRateLimiter(20, clock=lambda: now[0], sleep=fake_sleep)
    for _ in range(3):
        await limiter.wait_turn()
    assert waited == pytest.approx([3.0, 3.0])
    now[0] += 10
    await limiter.wait_turn()
    assert len(waited) == 2
    unlimited = AddRateLimiter(None, sleep=fake_sleep)
    await unlimited.wait_turn()
    await unlimited.wait_turn()
    assert len(waited) == 2


def test_connection_problem_is_the_only_retried_family() -> None:
    from nlmsync import errors

    families = [cls for cls in vars(errors).values()
                if isinstance(cls, type) and issubclass(cls, errors.NotebookLMError)]
    assert errors.ServerCommandNotFoundError in families and errors.ServerTimeoutError in families
    for cls in families:
        retried = is_retryable(cls("x"), idempotent=True, retry_on_connection_issue=True)
        assert retried is issubclass(cls, ConnectionProblem), cls.__name__
    assert not is_retryable(errors.ServerCommandNotFoundError("x"), idempotent=True, retry_on_connection_issue=True)


async def test_concurrent_calls_on_a_dropped_connection_share_one_reconnect(sleeps: Any) -> None:
    fake, nb, _ = _seeded(Faults(latency=0.05, drops=[DropRule(nth=4)]))
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        await client.server_info()
        results: list[int] = []

        async def read() -> None:
            results.append(len((await client.notebook_get(nb)).sources))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as tg:
                for _ in range(4):
                    tg.start_soon(read)
        assert results == [1, 1, 1, 1]
        assert client.connections_opened == 2


async def test_rate_limited_adds_pause_once_per_burst_slow_down_and_give_up_after_the_bound() -> None:
    now = [0.0]
    waited: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waited.append(seconds)
        now[0] += seconds

    limiter = AddRateLimiter(None, clock=lambda: now[0], sleep=fake_sleep, pauses=(10.0, 30.0))
    first, second = await limiter.wait_turn(), await limiter.wait_turn()  # two adds in flight, both refused
    assert waited == [] and limiter.limited(first) and limiter.limited(second)
    assert limiter.pauses_taken == [10.0] and limiter.per_minute == 20  # one pause for the burst; the published rate
    burst = await limiter.wait_turn()
    await limiter.wait_turn()
    assert waited == pytest.approx([10.0, 3.0])  # the pause, then 60/20 s between adds
    assert limiter.limited(burst) and limiter.per_minute == 10 and limiter.pauses_taken == [10.0, 30.0]
    assert not limiter.limited(await limiter.wait_turn()) and limiter.exhausted
    assert limiter.summary() == ("NotebookLM kept rate-limiting uploads: paused 2 times (40 s in all), then gave up "
                                 "on the remaining adds")


async def test_the_tools_the_server_lists_come_with_their_input_schemas(sleeps: Any) -> None:
    fake, _, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        schemas = await client.tool_input_schemas()
    assert {"notebook_get", "source_add", "notebook_delete"} <= set(schemas)
    assert "notebook_id" in schemas["notebook_get"]["properties"]


async def test_a_notebook_is_deleted_with_its_deletion_confirmed(sleeps: Any) -> None:
    fake, nb, _ = _seeded()
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        deleted = await client.notebook_delete(nb)
    assert nb not in fake.notebooks and nb in deleted.message
    assert [(c.tool, c.arguments) for c in fake.calls] == [("notebook_delete", {"notebook_id": nb, "confirm": True})]


async def test_a_source_is_described_by_its_summary_and_keywords(sleeps: Any) -> None:
    fake, _, sid = _seeded()
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        described = await client.source_describe(sid)
    assert described.summary == "Heapsort sorts." and described.keywords[:2] == ["heapsort", "sorts"]
