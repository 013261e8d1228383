"""NotebookLM client and fake server benchmark (run by hand, not in CI).

1. Call overhead: `notebook_get` on a 50-source notebook through `NotebookLMClient` (typed results, retry
   policy, session management) against the raw `mcp.Client.call_tool` — the peer — over the same transport,
   in-process and over stdio (the fake as a subprocess). Prints median latencies and the ratio.
2. Upload throughput: `source_add_text` of 50 real notes (Cranfield abstracts) over stdio with a state file.
3. Offline answers: for Cranfield queries, a 50-source notebook holds the judged-relevant abstracts plus
   random others; the fake's `notebook_query` cites passages. Quality = share of queries whose first citation
   is a relevant document, against the peer `rank_bm25.BM25Okapi` ranking whole abstracts (the same sources)
   in the same run; speed = median answer time against the peer's scoring time.

Parts 2 and 3 read the Cranfield collection that `benchmarks/corpora.py` builds (`BENCHMARK_CORPORA` names another
folder; tests and CI never read it).

usage: .venv/bin/python benchmarks/notebooklm_client.py [--queries 60] [--calls 200]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
from corpora import CORPORA  # benchmarks/corpora.py: where the corpora are
from mcp import Client
from rank_bm25 import BM25Okapi

from nlmsync.config import Settings
from nlmsync.fake import FakeNotebookLM, build_fake_server, serve_in_process
from nlmsync.notebooklm import connect
from nlmsync.notebooklm.transports import resolve_server
from nlmsync.search.tokenize import tokenize

REPO = Path(__file__).resolve().parent.parent
CRANFIELD = CORPORA / "cranfield"
CAPACITY = 50


def load_cranfield() -> tuple[dict[str, str], dict[str, str], dict[str, set[str]]]:
    docs = {d["id"]: d["text"] for d in map(json.loads, (CRANFIELD / "corpus.jsonl").open(encoding="utf-8"))
            if d["text"].strip()}
    queries = {q["id"]: q["text"] for q in map(json.loads, (CRANFIELD / "queries.jsonl").open(encoding="utf-8"))}
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (CRANFIELD / "qrels.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        query_id, doc_id, grade = line.split("\t")
        if 1 <= int(grade) <= 3:  # Cranfield grades: 1 = most relevant … 4 = minimal interest, -1 = none
            relevant[query_id].add(doc_id)
    return docs, queries, relevant


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def overhead(docs: dict[str, str], calls: int) -> None:
    print(f"\n== call overhead: notebook_get on a {CAPACITY}-source notebook, {calls} calls each ==")
    with tempfile.TemporaryDirectory() as tmp:
        seed = FakeNotebookLM(state_path=Path(tmp) / "fake-notebooklm.json")
        nb = seed.apply("notebook_create", {"title": "bench"})["notebook_id"]
        for doc_id in list(docs)[:CAPACITY]:
            seed.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": docs[doc_id],
                                      "title": f"cranfield/{doc_id}.md"})
        for label, spec in (("in-process", build_fake_server(seed)), ("stdio", "fake")):
            target = resolve_server(spec, state_dir=Path(tmp))
            raw: list[float] = []
            with tempfile.TemporaryFile("w+") as errlog:
                async with Client(target.transport(errlog)) as peer:
                    await peer.call_tool("notebook_get", {"notebook_id": nb})
                    for _ in range(calls):
                        start = time.perf_counter()
                        await peer.call_tool("notebook_get", {"notebook_id": nb})
                        raw.append(time.perf_counter() - start)
            ours: list[float] = []
            async with connect(spec, Settings(), state_dir=Path(tmp)) as client:
                await client.notebook_get(nb)
                for _ in range(calls):
                    start = time.perf_counter()
                    await client.notebook_get(nb)
                    ours.append(time.perf_counter() - start)
            print(f"{label:>10}: mcp.Client {median_ms(raw):7.3f} ms   NotebookLMClient {median_ms(ours):7.3f} ms   "
                  f"ratio {statistics.median(ours) / statistics.median(raw):5.2f}")


async def uploads(docs: dict[str, str]) -> None:
    print(f"\n== uploads: {CAPACITY} source_add_text calls to the stdio fake with a state file ==")
    with tempfile.TemporaryDirectory() as tmp:
        async with connect("fake", Settings(), state_dir=Path(tmp), in_process_fake=serve_in_process) as client:
            nb = (await client.notebook_create("bench")).notebook_id
            start = time.perf_counter()
            for doc_id in list(docs)[:CAPACITY]:
                await client.source_add_text(nb, docs[doc_id], f"cranfield/{doc_id}.md")
            elapsed = time.perf_counter() - start
    print(f"{CAPACITY / elapsed:8.1f} adds/s  ({elapsed * 1000 / CAPACITY:.2f} ms per add, state file rewritten "
          "after each)")


def answers(docs: dict[str, str], queries: dict[str, str], relevant: dict[str, set[str]], count: int) -> None:
    print(f"\n== offline answers: {count} Cranfield queries, {CAPACITY} sources each ==")
    rng = random.Random(7)
    ids = list(docs)
    hits_fake = hits_peer = 0
    fake_times: list[float] = []
    peer_times: list[float] = []
    chosen = [q for q in queries if relevant.get(q)][:count]
    for query_id in chosen:
        wanted = sorted(d for d in relevant[query_id] if d in docs)[:CAPACITY // 2]
        others = [d for d in rng.sample(ids, CAPACITY * 2) if d not in relevant[query_id]]
        notebook_docs = (wanted + others)[:CAPACITY]
        rng.shuffle(notebook_docs)
        fake = FakeNotebookLM()
        nb = fake.apply("notebook_create", {"title": "q"})["notebook_id"]
        source_doc = {}
        for doc_id in notebook_docs:
            sid = fake.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": docs[doc_id],
                                            "title": doc_id})["source_id"]
            source_doc[sid] = doc_id
        start = time.perf_counter()
        result: dict[str, Any] = fake.apply("notebook_query", {"notebook_id": nb, "query": queries[query_id]})
        fake_times.append(time.perf_counter() - start)
        first = result["citations"].get("1")
        hits_fake += bool(first and source_doc[first] in relevant[query_id])

        start = time.perf_counter()
        peer = BM25Okapi([tokenize(docs[d]) for d in notebook_docs])
        scores = peer.get_scores(tokenize(queries[query_id]))
        best = notebook_docs[max(range(len(scores)), key=scores.__getitem__)]
        peer_times.append(time.perf_counter() - start)
        hits_peer += best in relevant[query_id]
    print(f"first citation relevant: fake {hits_fake / len(chosen):.2%}   rank_bm25 (whole abstracts) "
          f"{hits_peer / len(chosen):.2%}")
    print(f"median time: fake answer {median_ms(fake_times):.2f} ms   rank_bm25 scoring {median_ms(peer_times):.2f} ms"
          f"   ratio {statistics.median(fake_times) / statistics.median(peer_times):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    if not CRANFIELD.exists():
        sys.exit(f"corpus not found: {CRANFIELD}")
    docs, queries, relevant = load_cranfield()
    anyio.run(overhead, docs, args.calls)
    anyio.run(uploads, docs)
    answers(docs, queries, relevant, args.queries)


if __name__ == "__main__":
    main()
