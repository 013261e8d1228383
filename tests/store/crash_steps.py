"""The store steps the crash tests kill, and the child process that runs one and dies before statement N.

A separate module so that the forkserver (`test_crash.py`) imports it once and forks each child from it: a
child then starts in milliseconds, and no thread of pytest's own process is forked along with it.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.store.helpers import NB, add

from nlmsync.config import Settings
from nlmsync.store import PackRecord, StateStore, open_database

KILLED, FINISHED, FAILED = 17, 0, 3
SETTINGS = Settings(max_conversations=3, max_aliases=6, max_query_records_per_conversation=4)
Step = Callable[[StateStore], Any]


def fixed_clock() -> datetime:
    return datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def open_at(path: Path) -> StateStore:
    return StateStore(open_database(path), SETTINGS, clock=fixed_clock)


def seed(store: StateStore) -> None:
    add(store, "a.md", "a-v1")
    add(store, "big.md", "big-0", part=0, part_count=2)
    add(store, "big.md", "big-1", part=1, part_count=2)
    add(store, "c.md", "c-v1", managed=False)
    store.register_source_alias("a-v0", "a-v1")
    store.register_source_alias("c-v0", "c-v1")
    store.mark_used(NB, ["a.md", "big.md"])
    for i in range(3):
        store.record_turn(NB, f"conv{i}", f"q{i}", f"a{i}", [f"a-v{i}"], ["a.md"], {"1": "a-v1"})
    store.queue_deletion(NB, "stale-1", "replaced")
    store.record_pack(PackRecord(NB, "p-v1", "hash-p1", "p/a.md … p/c.md (3 notes) · aaaaaaaa", "p/a.md", "p/c.md", 3,
                                 300), [("p/a.md", "ha"), ("p/b.md", "hb"), ("p/c.md", "hc")])
    add(store, "p/d.md", "d-alone")
    store.record_unmanaged(NB, {"hand-1": "p/x.md · cccccccc"})


def _replace_step(store: StateStore) -> None:
    with store.step():
        add(store, "a.md", "a-v2")
        store.register_source_alias("a-v1", "a-v2")
        store.queue_deletion(NB, "a-v1", "replaced by a new version of a.md")
        store.mark_used(NB, ["a.md"])


def _evict_step(store: StateStore) -> None:
    with store.step():
        for m in store.mappings_by_path(NB, "big.md"):
            store.record_eviction(NB, "big.md", m.source_id, "capacity")
        store.remove_mappings(NB, "big.md")


def _pack_replace_step(store: StateStore) -> None:
    """A pack and a note alone replaced by one pack holding the four, as a packed refresh records it."""
    with store.step():
        store.remove_pack(NB, "p-v1")
        store.queue_deletion(NB, "p-v1", "pack replaced")
        store.register_source_alias("p-v1", "p-v2")
        for m in store.mappings_by_path(NB, "p/d.md"):
            store.queue_deletion(NB, m.source_id, "p/d.md moved into a pack")
            store.register_source_alias(m.source_id, "p-v2")
        store.remove_mappings(NB, "p/d.md")
        store.record_pack(PackRecord(NB, "p-v2", "hash-p2", "p/a.md … p/d.md (4 notes) · bbbbbbbb", "p/a.md",
                                     "p/d.md", 4, 400), [("p/a.md", "ha2"), ("p/b.md", "hb"), ("p/c.md", "hc"),
                                                         ("p/d.md", "hd")])


def _turn_with_compaction(store: StateStore) -> None:
    store.record_turn(NB, "conv-new", "why?", "because", ["a-v1", "big-0"], ["a.md", "big.md"], {"1": "a-v1"})


def _alias_with_compaction(store: StateStore) -> None:
    with store.step():
        for i in range(6):
            add(store, f"x{i}.md", f"x{i}")
            store.register_source_alias(f"x{i}", f"y{i}")


STEPS: dict[str, Step] = {
    "replace": _replace_step,
    "evict": _evict_step,
    "pack_replace": _pack_replace_step,
    "reconcile": lambda s: s.reconcile(NB, {"a-v1", "big-1", "c-v1"}),
    "record_turn+compaction": _turn_with_compaction,
    "alias+compaction": _alias_with_compaction,
    "vault_rename": lambda s: s.apply_vault_rename("big.md", "moved/big.md"),
}


def traced_step(path: Path, step: Step, trace: Callable[[str], None]) -> None:
    store = open_at(path)
    store.db.conn.set_trace_callback(trace)
    step(store)


def traced_open(path: Path, trace: Callable[[str], None]) -> None:
    """`open_database` with every connection it makes traced (the check's and the migrating one)."""
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(trace)
        return conn

    sqlite3.connect = connect  # type: ignore[assignment]  # in a child process only
    open_database(path).close()


UPGRADE = "upgrade"


def die_before_statement(path: str, work: str, kill_at: int) -> None:
    """In a child process: run `work` (a step's name, or UPGRADE: opening an old file) on `path`, exiting
    with KILLED right before SQL statement `kill_at`, FINISHED after the last, FAILED on an exception."""
    try:
        count = 0

        def trace(_statement: str) -> None:
            nonlocal count
            count += 1
            if count == kill_at:
                os._exit(KILLED)

        if work == UPGRADE:
            traced_open(Path(path), trace)
        else:
            traced_step(Path(path), STEPS[work], trace)
        os._exit(FINISHED)
    finally:
        os._exit(FAILED)
