"""Benchmark: refresh of N new notes against the in-process fake server with injected latency per call.

For each concurrency level it prints the wall time against the ideal `ceil(N / c) × latency` (uploads only,
perfectly parallel) and the mutating calls made against the minimum necessary (one `source_add` per note),
then checks that a second refresh makes zero mutating calls.

    .venv/bin/python benchmarks/sync.py [--notes 200] [--latency 0.15] [--concurrency 1 4]
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import anyio

from nlmsync.app import Orchestrator
from nlmsync.config import Settings
from nlmsync.notebooklm import connect
from nlmsync.notebooklm.fake.faults import Faults
from nlmsync.notebooklm.fake.server import build_fake_server
from nlmsync.notebooklm.fake.state import FakeNotebookLM
from nlmsync.store import StateStore

MUTATING = {"source_add", "source_delete", "notebook_create", "notebook_query", "source_rename"}


def write_vault(root: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        rel = f"notes/{i // 50:02}/note-{i:04}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {i}\n\nBody of note {i} about topic {i % 17}.\n", encoding="utf-8")
        paths.append(rel)
    return paths


async def one_run(count: int, latency: float, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = root / "vault"
        paths = write_vault(vault, count)
        fake = FakeNotebookLM(capacity=count + 50, faults=Faults(latency=latency))
        notebook_id = fake.apply("notebook_create", {"title": "bench"})["notebook_id"]
        fake.calls.clear()
        settings = Settings(vault=vault, state=root / "state.db", notebook=notebook_id, capacity=count + 50,
                            concurrency=concurrency)
        store = StateStore.open(settings.state_path, settings)
        try:
            async with connect(build_fake_server(fake), settings) as client:
                orch = Orchestrator(settings, store, client)
                start = time.perf_counter()
                report = await orch.refresh(paths)
                wall = time.perf_counter() - start
                first_calls = list(fake.calls)
                mark = len(fake.calls)
                start = time.perf_counter()
                await orch.refresh(paths)
                second_wall = time.perf_counter() - start
        finally:
            store.close()
    assert report.counts() == {"added": count}, report.counts()
    second = fake.calls[mark:]
    return {
        "wall": wall,
        "ideal": math.ceil(count / concurrency) * latency,
        "mutating": sum(1 for c in first_calls if c.tool in MUTATING),
        "calls": len(first_calls),
        "second_mutating": sum(1 for c in second if c.tool in MUTATING),
        "second_gets": sum(1 for c in second if c.tool == "notebook_get"),
        "second_wall": second_wall,
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    args = parser.parse_args()
    print(f"refresh of {args.notes} new notes, {args.latency * 1000:.0f} ms injected latency per call")
    print(f"{'c':>3} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} {'mutating':>9} {'minimum':>8} "
          f"{'all calls':>9} {'2nd run: mutating, gets, s':>28}")
    for concurrency in args.concurrency:
        r = await one_run(args.notes, args.latency, concurrency)
        print(f"{concurrency:>3} {r['wall']:>8.2f} {r['ideal']:>8.2f} {r['wall'] / r['ideal']:>10.2f} "
              f"{r['mutating']:>9} {args.notes:>8} {r['calls']:>9} "
              f"{r['second_mutating']:>14}, {r['second_gets']}, {r['second_wall']:.2f}")


if __name__ == "__main__":
    anyio.run(main)
