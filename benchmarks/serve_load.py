"""Load test of `nlmsync serve` over streamable HTTP on loopback (run by hand, not in CI).

Writes out the tldr corpus (`tldr.jsonl.gz` of `benchmarks/corpora.py`, all 38,404 pages in every language by
default; `--english-only` for the 7,425 English ones) into a temporary vault, indexes it, starts
`nlmsync serve --transport http --port 0` as a subprocess (reading its URL from its stdout), then runs
CLIENTS concurrent MCP sessions × SEARCHES `search_notes` calls each. Prints every failure, the
latency percentiles, throughput, and — as the peer measured in the same run — the same queries
answered in-process by `VaultTools.search_notes` (no MCP, no HTTP), with the ratio between them.

usage: .venv/bin/python benchmarks/serve_load.py [--clients 20] [--searches 50] [--english-only]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
import httpx2
from corpora import CORPORA  # benchmarks/corpora.py: where the corpora are, and how to write them out
from corpora import materialize as write_out
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

REPO = Path(__file__).resolve().parent.parent
TOKEN = "serve-load-benchmark"


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def make_queries(corpus: Path, prefix: str | None, count: int, seed: int = 7) -> list[str]:
    """Queries from the corpus itself: a command name plus words of its description line."""
    pages: list[tuple[str, str]] = []
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            if prefix is None or record["path"].split("/")[0] == prefix:
                pages.append((record["path"], record["text"]))
    rng = random.Random(seed)
    queries: list[str] = []
    for path, text in rng.sample(pages, min(count, len(pages))):
        described = next((ln[2:] for ln in text.splitlines() if ln.startswith("> ")), "")
        words = [w.strip(".,`'\"()") for w in described.split()][:4]
        queries.append(" ".join([Path(path).stem, *[w for w in words if w][:rng.randint(1, 3)]]))
    return queries


def read_url(server: subprocess.Popen[str], timeout: float) -> str:
    """The URL `serve` prints on stdout once it listens."""
    stdout = server.stdout
    assert stdout is not None

    async def first_line() -> str:
        with anyio.fail_after(timeout):
            return await anyio.to_thread.run_sync(stdout.readline, abandon_on_cancel=True)

    line = anyio.run(first_line)
    if not line.startswith("http://"):
        raise SystemExit(f"serve did not announce its URL (exit {server.poll()}): {line!r}")
    return line.strip()


async def run_clients(url: str, queries: list[str], clients: int, searches: int) -> tuple[list[float], list[str]]:
    latencies: list[float] = []
    failures: list[str] = []

    async def client_session(n: int) -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120) as http, \
                Client(streamable_http_client(url, http_client=http)) as client:
            for i in range(searches):
                query = queries[(n * searches + i) % len(queries)]
                started = time.perf_counter()
                try:
                    result = await client.call_tool("search_notes", {"query": query, "limit": 10})
                except Exception as exc:  # noqa: BLE001 - a benchmark reports every failure and goes on
                    failures.append(f"client {n} call {i}: {type(exc).__name__}: {exc}")
                    continue
                latencies.append(time.perf_counter() - started)
                if result.is_error:
                    failures.append(f"client {n} call {i}: tool error: {result.content[0].text}")

    async with anyio.create_task_group() as tg:
        for n in range(clients):
            tg.start_soon(client_session, n)
    return latencies, failures


def in_process_peer(vault: Path, queries: list[str]) -> list[float]:
    sys.path.insert(0, str(REPO / "src"))
    from nlmsync.config import Settings
    from nlmsync.search.index import NoteIndex
    from nlmsync.server import VaultTools
    from nlmsync.store.db import open_database

    settings = Settings(vault=vault)
    tools = VaultTools(settings, NoteIndex(vault, open_database(settings.state_path), settings))
    tools.search_notes(queries[0])  # hydrate the index from the cache outside the timing
    latencies = []
    for query in queries:
        started = time.perf_counter()
        tools.search_notes(query, 10)
        latencies.append(time.perf_counter() - started)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--searches", type=int, default=50)
    parser.add_argument("--english-only", action="store_true", help="the 7,425 English pages, not all 38,404")
    args = parser.parse_args()
    corpus = CORPORA / "tldr.jsonl.gz"
    prefix = "pages" if args.english_only else None
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLMSYNC_")} | {"NLMSYNC_SERVE_TOKEN": TOKEN}
    nlmsync = [sys.executable, "-m", "nlmsync"]
    with tempfile.TemporaryDirectory(prefix="nlmsync-serve-load-") as tmp:
        vault = Path(tmp) / "vault"
        write_out(corpus, vault, prefix)
        notes = sum(1 for _ in vault.rglob("*.md"))
        started = time.perf_counter()
        subprocess.run(nlmsync + ["--vault", str(vault), "index", "--json"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        print(f"vault: tldr {'all languages' if prefix is None else 'pages/ (English)'}, {notes} notes, "
              f"indexed in {time.perf_counter() - started:.1f} s")
        queries = make_queries(corpus, prefix, args.clients * args.searches)
        server = subprocess.Popen(nlmsync + ["--vault", str(vault), "serve", "--transport", "http", "--port", "0"],
                                  env=env, stdout=subprocess.PIPE, text=True)
        try:
            url = read_url(server, 120)
            # the first search loads the index from the state file; the in-process peer does so untimed too
            cold, cold_failures = anyio.run(run_clients, url, queries[:1], 1, 1)
            if cold_failures:
                raise SystemExit(f"first search failed: {cold_failures[0]}")
            print(f"first search (loads the index into the server): {cold[0] * 1000:.0f} ms")
            started = time.perf_counter()
            latencies, failures = anyio.run(run_clients, url, queries, args.clients, args.searches)
            wall = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait(timeout=30)
        peer = in_process_peer(vault, queries)
    total = args.clients * args.searches
    print(f"serve over HTTP: {args.clients} clients x {args.searches} searches = {total} calls in {wall:.1f} s "
          f"({total / wall:.0f} calls/s), {total - len(failures)} ok, {len(failures)} failed")
    for failure in failures[:10]:
        print(f"  FAILED {failure}")
    p50, p99 = percentile(latencies, 50), percentile(latencies, 99)
    print(f"  latency p50 {p50 * 1000:.1f} ms, p95 {percentile(latencies, 95) * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms")
    q50, q99 = percentile(peer, 50), percentile(peer, 99)
    print(f"peer, in-process VaultTools.search_notes (sequential, no MCP/HTTP): p50 {q50 * 1000:.1f} ms, "
          f"p99 {q99 * 1000:.1f} ms, mean {statistics.mean(peer) * 1000:.1f} ms")
    print(f"ratio serve/in-process: p50 x{p50 / q50:.1f}, p99 x{p99 / q99:.1f} "
          f"(serve latencies include queueing behind {args.clients} concurrent clients)")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
