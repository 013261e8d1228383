"""Benchmark: what a refresh costs per synced note and per change, against the fake NotebookLM server.

Cases (run by hand, never in CI; the machine is shared, so compare figures of one run):

- in process, zero latency, for each size N: the first `refresh --all` of N new notes, then the idle
  `refresh --all` (nothing changed): first the one after the sync, which reads every note once more and
  records its hashes by mtime and size (the notes were written just before the sync, too recently to trust
  their mtime then), then the steady idle run — then an incremental one (1% of the notes edited); the steady
  idle, incremental and `ask` runs are the fastest of `--repeats`. nlmsync's own time is the wall time less
  the time spent inside server calls; the idle run's growth per synced note is the slope of its own time
  between the smallest and the largest N.
- first refresh of `--latency-notes` new notes with `--latency` injected per call, at each concurrency:
  wall time against the ideal `ceil(N / c) × latency`, with the fake in process (its CPU and MCP's server
  side share nlmsync's event loop) and as a subprocess over stdio (`fake-stdio`, as a real server is: only
  nlmsync and the MCP client run in the measured process; the server is started before the clock starts).
- `ask` on a selection that is already live: nlmsync's own time beyond the server calls.
- the CLI, `--server "fake --capacity … --state FILE"`: the first `refresh --all` of `--cli-notes` new
  notes, then the idle run twice (the first records the hashes; start-up included; wall and CPU time of the
  process).

    .venv/bin/python benchmarks/sync.py [--sizes 200 2000 10000] [--latency 0.15] [--latency-notes 200]
        [--concurrency 1 4 8] [--cli-notes 2000] [--skip-cli] [--skip-latency] [--repeats 3]
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio

from nlmsync.app import Orchestrator
from nlmsync.config import Settings
from nlmsync.fake.faults import Faults
from nlmsync.fake.server import build_fake_server
from nlmsync.fake.state import FakeNotebookLM
from nlmsync.notebooklm import connect
from nlmsync.store import StateStore

MUTATING = {"source_add", "source_delete", "notebook_create", "notebook_query", "source_rename"}
TOPICS = ["heap", "graph", "tree", "hash", "sort", "queue", "stack", "trie", "cache", "index", "merge",
          "search", "string", "matrix", "prime", "bloom", "skip"]


def note_text(i: int, version: int = 1) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return (f"# Note {i} on {topic}\n\nVersion {version}. This note explains {topic} structures, with an "
            f"example numbered {i} and a few words about {TOPICS[(i * 7) % len(TOPICS)]}.\n\n## Details\n"
            f"{topic} " * 40 + "\n")


def write_vault(root: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        rel = f"notes/{i // 100:03}/note-{i:05}.md"
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(i), encoding="utf-8")
        paths.append(rel)
    return paths


class TimedClient:
    """The real client, measuring the wall time during which at least one of its calls was under way (what
    the server side costs; with concurrent uploads the calls overlap, so their sum would overstate it)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.in_calls = 0.0
        self._inflight = 0
        self._busy_since = 0.0

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._client, name)
        if not inspect.iscoroutinefunction(attr):
            return attr

        async def timed(*args: Any, **kwargs: Any) -> Any:
            if self._inflight == 0:
                self._busy_since = time.perf_counter()
            self._inflight += 1
            try:
                return await attr(*args, **kwargs)
            finally:
                self._inflight -= 1
                if self._inflight == 0:
                    self.in_calls += time.perf_counter() - self._busy_since

        return timed


class Run:
    def __init__(self, fake: FakeNotebookLM, settings: Settings) -> None:
        self.fake = fake
        self.settings = settings
        self.server = build_fake_server(fake)  # built once: its construction is not nlmsync's cost

    async def timed(self, action: Callable[[Orchestrator], Awaitable[Any]]) -> dict[str, float]:
        """One nlmsync run in process (open the store, connect, act); its wall, own time and calls."""
        mark = len(self.fake.calls)
        start, cpu = time.perf_counter(), time.process_time()
        store = StateStore.open(self.settings.state_path, self.settings)
        try:
            async with connect(self.server, self.settings) as client:
                timed = TimedClient(client)
                await action(Orchestrator(self.settings, store, timed))
        finally:
            store.close()
        wall = time.perf_counter() - start
        calls = self.fake.calls[mark:]
        return {"wall": wall, "own": wall - timed.in_calls, "in_calls": timed.in_calls,
                "cpu": time.process_time() - cpu,
                "mutating": sum(1 for c in calls if c.tool in MUTATING),
                "adds": sum(1 for c in calls if c.tool == "source_add"),
                "gets": sum(1 for c in calls if c.tool == "notebook_get")}


def world(root: Path, count: int, *, latency: float = 0.0, concurrency: int = 4) -> tuple[Run, list[str]]:
    vault = root / "vault"
    paths = write_vault(vault, count)
    fake = FakeNotebookLM(capacity=count + 50, faults=Faults(latency=latency))
    notebook_id = fake.apply("notebook_create", {"title": "bench"})["notebook_id"]
    settings = Settings(vault=vault, state=root / "state.db", notebook=notebook_id, capacity=count + 50,
                        concurrency=concurrency)
    return Run(fake, settings), paths


def fastest(runs: list[dict[str, float]]) -> dict[str, float]:
    return min(runs, key=lambda r: r["wall"])


async def sizes_case(count: int, repeats: int) -> dict[str, dict[str, float]]:
    """The cases of one size; the idle, incremental and ask runs are the fastest of `repeats` (the machine is
    shared: the fastest is the one least disturbed)."""
    with tempfile.TemporaryDirectory() as tmp:
        run, paths = world(Path(tmp), count)
        first = await run.timed(lambda orch: orch.refresh(all_notes=True))
        assert first["adds"] == count, first
        recording = await run.timed(lambda orch: orch.refresh(all_notes=True))
        idle = fastest([await run.timed(lambda orch: orch.refresh(all_notes=True)) for _ in range(repeats)])
        edited = max(1, count // 100)
        increments = []
        for version in range(2, 2 + repeats):  # the same notes edited again each time
            for i in range(0, count, count // edited)[:edited]:
                (run.settings.vault / paths[i]).write_text(note_text(i, version=version), encoding="utf-8")
            increments.append(await run.timed(lambda orch: orch.refresh(all_notes=True)))
            assert increments[-1]["adds"] == edited, increments[-1]
        incremental = fastest(increments)
        incremental["edited"] = edited
        question = f"How do {TOPICS[3]} structures work in note 3?"
        await run.timed(lambda orch: orch.ask(question))  # makes the selection live, builds the index
        ask = fastest([await run.timed(lambda orch: orch.ask(question)) for _ in range(repeats)])
        assert ask["adds"] == 0, ask
    return {"first": first, "recording": recording, "idle": idle, "incremental": incremental, "ask": ask}


async def latency_case(count: int, latency: float, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        run, paths = world(Path(tmp), count, latency=latency, concurrency=concurrency)
        first = await run.timed(lambda orch: orch.refresh(paths))
    assert first["adds"] == count, first
    first["ideal"] = math.ceil(count / concurrency) * latency
    return first


async def latency_case_stdio(count: int, latency: float, concurrency: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        paths = write_vault(root / "vault", count)
        settings = Settings(vault=root / "vault", state=root / "state.db", capacity=count + 50,
                            concurrency=concurrency)
        spec = f"fake-stdio --latency {latency} --capacity {count + 50}"
        async with connect(spec, settings, state_dir=root) as client:
            notebook_id = (await client.notebook_create("bench")).notebook_id  # starts the server
            settings = settings.model_copy(update={"notebook": notebook_id})
            timed = TimedClient(client)
            start, cpu = time.perf_counter(), time.process_time()
            store = StateStore.open(settings.state_path, settings)
            try:
                report = await Orchestrator(settings, store, timed).refresh(paths)
            finally:
                store.close()
            wall = time.perf_counter() - start
    adds = report.counts().get("added", 0)
    assert adds == count, report.counts()
    return {"wall": wall, "own": wall - timed.in_calls, "cpu": time.process_time() - cpu, "adds": adds,
            "ideal": math.ceil(count / concurrency) * latency}


def timed_command(command: list[str], env: dict[str, str], label: str) -> tuple[float, float]:
    """One run of an nlmsync command line as a process of its own: its wall and CPU seconds (start-up included).
    A failed run stops the benchmark, naming `label`."""
    start, before = time.perf_counter(), os.times()
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - start
    after = os.times()
    if done.returncode != 0:
        raise SystemExit(f"CLI {label} run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, after.children_user - before.children_user + after.children_system - before.children_system


def cli_case(count: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = root / "vault"
        write_vault(vault, count)
        server = f"fake --capacity {count + 50} --state {root / 'fake.json'}"
        command = [sys.executable, "-m", "nlmsync", "--vault", str(vault), "--server", server,
                   "--notebook", "new:bench", "refresh", "--all", "--json"]
        env = {**os.environ, "NLMSYNC_CAPACITY": str(count + 50)}
        times = {}
        for label in ("first", "recording", "idle"):  # the second run records the notes' hashes (see sizes)
            times[label], times[f"{label}_cpu"] = timed_command(command, env, label)
        times["state_mb"] = (root / "fake.json").stat().st_size / 1e6 if (root / "fake.json").exists() else 0.0
    return times


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 2000, 10000])
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--latency-notes", type=int, default=200)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--cli-notes", type=int, default=2000)
    parser.add_argument("--skip-cli", action="store_true")
    parser.add_argument("--skip-latency", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="idle, incremental and ask runs: the fastest of N")
    args = parser.parse_args()

    print("in process, zero latency (own = wall less time inside server calls)")
    print(f"{'notes':>6} | {'first s':>8} {'own ms/note':>11} | {'idle#1 s':>8} {'idle s':>7} {'own s':>6} {'CPU s':>6} "
          f"{'mut':>4} {'gets':>4} | {'1% edited s':>11} {'adds':>5} {'vs idle+adds':>12} | {'ask own ms':>10}")
    results = {}
    for count in args.sizes:
        r = results[count] = await sizes_case(count, args.repeats)
        first, recording, idle, inc, ask = r["first"], r["recording"], r["idle"], r["incremental"], r["ask"]
        per_add = first["in_calls"] / max(1, first["adds"])
        expected = idle["wall"] + inc["adds"] * per_add
        print(f"{count:>6} | {first['wall']:>8.2f} {first['own'] / count * 1000:>11.2f} | {recording['wall']:>8.3f} "
              f"{idle['wall']:>7.3f} {idle['own']:>6.3f} {idle['cpu']:>6.3f} {idle['mutating']:>4} {idle['gets']:>4} | "
              f"{inc['wall']:>11.3f} {inc['adds']:>5} {inc['wall'] / expected:>11.2f}x | {ask['own'] * 1000:>10.1f}")
    if len(args.sizes) > 1:
        small, large = min(args.sizes), max(args.sizes)
        slope = (results[large]["idle"]["own"] - results[small]["idle"]["own"]) / (large - small)
        print(f"idle refresh: nlmsync's own time grows by {slope * 1000:.3f} ms per synced note ({small} -> {large})")

    if not args.skip_latency:
        print(f"\nfirst refresh of {args.latency_notes} new notes, {args.latency * 1000:.0f} ms latency per call")
        print(f"{'fake':>10} {'c':>3} {'wall s':>8} {'ideal s':>8} {'wall/ideal':>10} {'adds':>5} {'CPU s':>6}")
        for where, case in (("in process", latency_case), ("stdio", latency_case_stdio)):
            walls = {}
            for concurrency in args.concurrency:
                r = await case(args.latency_notes, args.latency, concurrency)
                walls[concurrency] = r["wall"]
                print(f"{where:>10} {concurrency:>3} {r['wall']:>8.2f} {r['ideal']:>8.2f} {r['wall'] / r['ideal']:>10.2f} "
                      f"{r['adds']:>5} {r['cpu']:>6.2f}")
            if 4 in walls and 8 in walls:
                print(f"{where:>10} c=8 vs c=4: {walls[4] / walls[8]:.2f}x faster")

    if not args.skip_cli:
        print(f"\nCLI, --server \"fake --state FILE\", {args.cli_notes} notes")
        t = cli_case(args.cli_notes)
        print(f"first refresh --all {t['first']:.1f} s ({t['first_cpu']:.1f} s CPU), then idle refresh --all "
              f"{t['recording']:.2f} s ({t['recording_cpu']:.2f} s CPU; records the hashes), then "
              f"{t['idle']:.2f} s ({t['idle_cpu']:.2f} s CPU) (fake state file {t['state_mb']:.1f} MB)")


if __name__ == "__main__":
    anyio.run(main)
