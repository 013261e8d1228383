"""Bounded concurrent uploads, the add rate limit, and registry writes in the order the notes were given."""

from __future__ import annotations

import anyio
import pytest

from nlmsync.sync.prepare import AddRateLimiter

pytestmark = pytest.mark.anyio


class GatedClient:
    """The real client, but each `source_add` waits for the test to release it (in any order it likes)."""

    def __init__(self, client, gates: dict[str, anyio.Event]) -> None:
        self._client = client
        self.gates = gates
        self.in_flight = 0
        self.peak = 0
        self.started: list[str] = []
        self.arrived = anyio.Event()

    def __getattr__(self, name):
        return getattr(self._client, name)

    async def source_add_text(self, notebook_id, text, title, wait=None):
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        self.started.append(title)
        self.arrived.set()
        try:
            await self.gates[title.split(" · ")[0]].wait()
            return await self._client.source_add_text(notebook_id, text, title, wait=wait)
        finally:
            self.in_flight -= 1


async def test_uploads_are_bounded_and_registry_is_written_in_order(make_world):
    world = make_world(concurrency=3)
    paths = [f"n{i}.md" for i in range(7)]
    for p in paths:
        world.write(p, f"note {p}")
    gates = {p: anyio.Event() for p in paths}
    holder: list[GatedClient] = []

    def wrap(client):
        holder.append(GatedClient(client, gates))
        return holder[0]

    async with world.run(wrap=wrap) as orch:
        async with anyio.create_task_group() as tg:
            result: list = []

            async def refresh():
                result.append(await orch.refresh(paths))

            tg.start_soon(refresh)
            gated = holder[0]
            with anyio.fail_after(30):
                while len(gated.started) < 3:
                    await gated.arrived.wait()
                    gated.arrived = anyio.Event()
                assert gated.in_flight == 3  # the fourth upload waits for a free slot
                for p in reversed(paths):  # finish in reverse order
                    gates[p].set()
        assert [n.path for n in result[0].notes] == paths
        assert holder[0].peak == 3
        order = [e.path for e in orch.store.eviction_queue(world.notebook_id)]
        assert order == paths  # used (and queued) in the order given, whatever order uploads finished


async def test_rate_limiter_spaces_adds():
    now = [100.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    limiter = AddRateLimiter(20, clock=lambda: now[0], sleep=sleep)
    for _ in range(4):
        await limiter.wait()
    assert slept == [3.0, 3.0, 3.0]  # 20 per minute: one every 3 s
    unlimited = AddRateLimiter(None, clock=lambda: now[0], sleep=sleep)
    await unlimited.wait()
    assert slept == [3.0, 3.0, 3.0]
