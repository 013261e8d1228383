"""What counting stop words costs in queries/s, against dropping them (run by hand).

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/stop_word_cost.py [--corpus tldr] [--rounds 5]

Stop words count a quarter in a query (`search.query.STOP_WORD_WEIGHT`), so a query reads their long
postings; this measures what that costs against dropping them. Both ways
answer the same 1,000 queries as `search_peers.py` (one at a time, the query's weighting included, the
first ten hits) on one index, in one process, in alternating rounds so the machine's load is the same
for both: each round clears the per-term cache and answers the queries twice, *new* (each term computed
on its first use) then *cached*. Printed: best and median queries/s (CPU time) of each, and the ratios.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_peers import CACHE, documents, materialize, throughput_queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="tldr")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    from nlmsync.config import Settings
    from nlmsync.search.index import NoteIndex
    from nlmsync.search.query import STOP_WORDS, query_weights
    from nlmsync.search.ranking import Ranking
    from nlmsync.store.db import open_database

    vault = materialize(args.corpus)
    state = CACHE / args.corpus / "stop-words" / "state.db"
    state.parent.mkdir(parents=True, exist_ok=True)
    index = NoteIndex(vault, open_database(state), Settings(vault=vault, state=state))
    index.sync()
    postings = index._postings
    ranking = Ranking(postings)
    queries = throughput_queries(args.corpus, documents(args.corpus), 1000)

    def counted(query: str) -> None:
        ranking.rank(query_weights(query), 10, STOP_WORDS)

    def dropped(query: str) -> None:
        weights = query_weights(query)
        ranking.rank({term: w for term, w in weights.items() if term not in STOP_WORDS} or weights, 10, STOP_WORDS)

    ways: dict[str, Callable[[str], None]] = {"stop words counted (now)": counted, "stop words dropped": dropped}
    rates: dict[tuple[str, str], list[float]] = {(way, kind): [] for way in ways for kind in ("new", "cached")}
    for _ in range(args.rounds):
        for way, answer in ways.items():
            ranking._cache.clear()
            ranking._cache_postings = 0
            for kind in ("new", "cached"):
                start = time.process_time()
                for query in queries:
                    answer(query)
                rates[way, kind].append(len(queries) / (time.process_time() - start))
    print(f"{args.corpus}: {len(postings)} notes, {len(queries)} queries, best (median) of {args.rounds} rounds\n")
    print("| queries/s | new | cached |\n|---|---|---|")
    for way in ways:
        cells = [f"{max(rates[way, kind]):,.0f} ({sorted(rates[way, kind])[args.rounds // 2]:,.0f})"
                 for kind in ("new", "cached")]
        print(f"| {way} | " + " | ".join(cells) + " |")
    now, before = ways
    ratios = [max(rates[now, kind]) / max(rates[before, kind]) for kind in ("new", "cached")]
    print(f"| counted / dropped | {ratios[0]:.2f} | {ratios[1]:.2f} |")


if __name__ == "__main__":
    main()
