"""State store benchmark (run by hand, never in CI).

A registry of 50,000 mappings (5,000 of them in the notebook being reconciled) and 5,000 aliases;
200 conversations of 200 query records each. Times: bulk registration, alias resolution, lookups by
source id, reconcile of the 5,000-entry notebook against a remote set, usage marking + eviction
candidate, one logical step (replace: upsert + alias + queued deletion) committed to disk, the same
step at the alias hard cap (mean, compactions included), compaction, a turn past the conversation
bound (which compacts), and opening the file (the integrity check that refuses damaged files,
against a bare connect).

Peer, measured in the same run: the reference plugin's persistence model — the whole state as one
JSON document rewritten (and fsynced) on every change, aliases resolved in a dict — for the same
per-step commit and the same reconcile. Ratios > 1 mean the peer is slower.

usage: .venv/bin/python benchmarks/store.py [--mappings 50000] [--aliases 5000] [--steps 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nlmsync.config import Settings
from nlmsync.store import StateStore, check_state_file
from nlmsync.store._aliases import resolve_chain

MAIN = "nb-main"
OTHER = "nb-archive"
MAIN_SIZE = 5_000


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def build(store: StateStore, mappings: int, aliases: int) -> None:
    with store.step():
        for i in range(mappings):
            nb = MAIN if i < MAIN_SIZE else OTHER
            store.upsert_mapping(notebook_id=nb, path=f"notes/{i:06d}.md", source_id=f"src-{i}",
                                 content_hash=f"{i:032x}", title=f"notes/{i:06d}.md · {i:08x}")
        for i in range(aliases):
            store.register_source_alias(f"src-{i}", f"src-{i}-v2")


def json_peer(mappings: int, aliases: int, path: Path, steps: int) -> dict[str, float]:
    """The whole state in one JSON document, rewritten and fsynced on every change."""
    state: dict[str, Any] = {
        "registry": {f"{MAIN if i < MAIN_SIZE else OTHER}|notes/{i:06d}.md": {
            "sourceId": f"src-{i}", "hash": f"{i:032x}", "title": f"notes/{i:06d}.md", "status": "active",
            "lastUsed": 0, "useCount": 0} for i in range(mappings)},
        "aliases": {f"src-{i}": f"src-{i}-v2" for i in range(aliases)},
        "conversations": {},
    }

    def save() -> None:
        tmp = path.with_suffix(".tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(state, handle)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)

    step_times = []
    for n in range(steps):
        start = time.perf_counter()
        key = f"{MAIN}|notes/{n:06d}.md"
        old = state["registry"][key]["sourceId"]
        state["registry"][key]["sourceId"] = f"peer-{n}"
        state["aliases"][old] = f"peer-{n}"
        save()
        step_times.append(time.perf_counter() - start)
    remote = {f"src-{i}-v2" for i in range(MAIN_SIZE) if i % 10} | {f"other-{i}" for i in range(40)}

    def reconcile() -> None:
        for key, entry in state["registry"].items():
            if key.startswith(MAIN + "|"):
                resolved = resolve_chain(state["aliases"].get, entry["sourceId"])
                entry["status"] = "active" if resolved in remote else "stale"
                entry["sourceId"] = resolved if resolved in remote else entry["sourceId"]
        save()

    reconcile_time, _ = timed(reconcile)
    return {"step": statistics.median(step_times), "reconcile": reconcile_time}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mappings", type=int, default=50_000)
    parser.add_argument("--aliases", type=int, default=5_000)
    parser.add_argument("--steps", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.db"
        settings = Settings(max_aliases=max(args.aliases * 2, 5_000))
        store = StateStore.open(path, settings)
        rows: list[tuple[str, str]] = []

        t, _ = timed(lambda: build(store, args.mappings, args.aliases))
        rows.append(("register mappings + aliases (one step)", f"{t:.2f} s"))

        ids = [f"src-{i}" for i in range(args.aliases)]
        t, _ = timed(lambda: [store.resolve_source_id(i) for i in ids])
        rows.append((f"resolve_source_id x{len(ids)}", f"{t * 1e6 / len(ids):.1f} µs each"))

        t, _ = timed(lambda: [store.mapping_by_source_id(MAIN, f"src-{i}-v2") for i in range(1_000)])
        rows.append(("mapping_by_source_id (through an alias) x1000", f"{t * 1e3:.0f} µs each"))

        remote = {f"src-{i}-v2" for i in range(MAIN_SIZE) if i % 10} | {f"other-{i}" for i in range(40)}
        t_reconcile, result = timed(lambda: store.reconcile(MAIN, remote))
        rows.append((f"reconcile {MAIN_SIZE} entries (limit: well under 1 s)",
                     (f"{t_reconcile * 1e3:.0f} ms  (active {len(result.active)}, stale {len(result.stale)}, "
                     f"canonicalized {len(result.canonicalized)})")))

        t, _ = timed(lambda: [store.mark_used(MAIN, [f"notes/{i:06d}.md"]) for i in range(0, 200, 2)])
        rows.append(("mark_used (5,000-entry queue) x100", f"{t * 10:.1f} ms each"))
        t, candidate = timed(lambda: store.next_eviction_candidate(MAIN))
        rows.append(("next_eviction_candidate", f"{t * 1e3:.1f} ms  -> {candidate}"))

        step_times = []
        for n in range(args.steps):
            start = time.perf_counter()
            with store.step():
                old = store.mappings_by_path(MAIN, f"notes/{n:06d}.md")[0]
                store.upsert_mapping(old, source_id=f"new-{n}", content_hash=f"n{n}")
                store.register_source_alias(old.source_id, f"new-{n}")
                store.queue_deletion(MAIN, old.source_id, "replaced")
            step_times.append(time.perf_counter() - start)
        t_step = statistics.median(step_times)
        rows.append(("one replace step committed (median)", f"{t_step * 1e3:.2f} ms"))

        store.settings = Settings(max_aliases=len(store.aliases()))
        at_cap = []
        for n in range(args.steps):
            start = time.perf_counter()
            with store.step():
                old = store.mappings_by_path(OTHER, f"notes/{MAIN_SIZE + n:06d}.md")[0]
                store.upsert_mapping(old, source_id=f"capped-{n}", content_hash=f"c{n}")
                store.register_source_alias(old.source_id, f"capped-{n}")
            at_cap.append(time.perf_counter() - start)
        rows.append((f"replace step at the alias cap (mean of {args.steps})",
                     f"{statistics.mean(at_cap) * 1e3:.2f} ms  (slowest {max(at_cap) * 1e3:.0f} ms)"))

        with store.step():
            for c in range(200):
                for q in range(200):
                    store.db.execute(
                        "INSERT INTO query_records (notebook_id, conversation_id, question, source_ids, "
                        "selected_paths, citations, asked_at) VALUES (?, ?, 'q', ?, '[]', '{}', 't')",
                        [MAIN, f"c{c}", json.dumps([f"src-{(c * 200 + q) % args.aliases}"])])
                store.db.execute("INSERT INTO conversations VALUES (?, ?, 't', ?)", [MAIN, f"c{c}", c])
        store.settings = Settings(max_aliases=args.aliases // 2, max_conversations=100)
        t, report = timed(store.compact)
        rows.append(("compact (200 conv x 200 records, alias cap to half)",
                     (f"{t * 1e3:.0f} ms  (dropped {report.conversations} conversations, {report.query_records} "
                     f"records, {report.aliases} aliases)")))
        turn_times = []
        for n in range(10):
            start = time.perf_counter()
            store.record_turn(MAIN, f"late{n}", "q", "a", [f"src-{n}"], [], {})
            turn_times.append(time.perf_counter() - start)
        rows.append(("record_turn past the conversation bound (median)",
                     f"{statistics.median(turn_times) * 1e3:.0f} ms  (compaction included)"))
        store.close()
        size = path.stat().st_size
        t_check = min(timed(lambda: check_state_file(path))[0] for _ in range(3))
        t_open = min(timed(lambda: StateStore.open(path).close())[0] for _ in range(3))
        t_bare = min(timed(lambda: sqlite3.connect(path).close())[0] for _ in range(3))
        rows.append(("open the state file (check + migrations)",
                     (f"{t_open * 1e3:.1f} ms  (integrity check {t_check * 1e3:.1f} ms; bare connect "
                      f"{t_bare * 1e3:.2f} ms)")))

        peer = json_peer(args.mappings, args.aliases, Path(tmp) / "peer.json", min(args.steps, 50))
        rows.append(("peer JSON file: one replace step (median)",
                     f"{peer['step'] * 1e3:.1f} ms  (ratio peer/nlmsync {peer['step'] / t_step:.0f}x)"))
        rows.append(("peer JSON file: reconcile + save",
                     f"{peer['reconcile'] * 1e3:.0f} ms  (ratio peer/nlmsync {peer['reconcile'] / t_reconcile:.1f}x)"))
        rows.append(("state file size", f"{size / 1e6:.1f} MB"))

    width = max(len(name) for name, _ in rows)
    print(f"nlmsync state store: {args.mappings} mappings, {args.aliases} aliases")
    for name, value in rows:
        print(f"  {name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
