"""Bounded concurrent uploads and registry writes in the order the notes were given."""

from __future__ import annotations

import time

import anyio
import pytest

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


async def test_concurrent_uploads_honour_the_add_rate_limit(make_world):
    world = make_world(concurrency=4, add_rate_per_minute=20)
    paths = [f"n{i}.md" for i in range(4)]
    for p in paths:
        world.write(p, f"note {p}")
    waits: list[float] = []

    async def sleep(seconds: float) -> None:  # the client's pacing, recorded instead of waited for
        waits.append(seconds)

    started = time.monotonic()
    async with world.run(sleep=sleep) as orch:
        report = await orch.refresh(paths)
    elapsed = time.monotonic() - started
    assert report.counts() == {"added": 4}
    # 20 adds a minute: after the first, each of the other three waits for its 3 s slot, less the real time
    # that passed since the first started (the pacing reads the real clock; the sleeps are only recorded)
    assert len(waits) == 3 and sum(waits) >= 3 + 6 + 9 - 3 * elapsed
