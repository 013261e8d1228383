"""Eviction order of the segmented LRU, usage marking, the eviction log, pending deletions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples
from tests.store.helpers import NB, add, open_store

from nlmsync.store import StateStore
from nlmsync.store._eviction import EVICTION_LOG_LIMIT
from nlmsync.store._lru import PROBATION, PROTECTED, LruEntry, apply_use, eviction_order, protected_capacity


def _entries(*specs: tuple[str, str, int, int]) -> dict[str, LruEntry]:
    return {p: LruEntry(path=p, segment=seg, tick=t, uses=u) for p, seg, t, u in specs}  # type: ignore[arg-type]


def test_pure_policy_promotes_on_second_use_and_demotes_protected_overflow() -> None:
    entries = _entries(("a", PROBATION, 1, 0), ("b", PROBATION, 2, 1), ("c", PROTECTED, 3, 2))
    changed, next_tick = apply_use(entries, ["a", "b", "a", "ghost"], 10, protected_cap=1)
    assert changed["a"] == LruEntry("a", PROBATION, 10, 1)
    assert changed["b"].segment == PROTECTED and changed["b"].tick == 11
    assert changed["c"] == LruEntry("c", PROBATION, 12, 2)
    assert next_tick == 13
    merged = {**entries, **changed}
    assert eviction_order(merged.values()) == ["a", "c", "b"]
    assert eviction_order(merged.values(), exclude={"a"}) == ["c", "b"]


@pytest.mark.parametrize(("capacity", "share", "expected"), [(50, 0.7, 35), (50, 0.0, 0), (50, 1.0, 50),
                                                               (10, 0.7, 7), (3, 0.5, 1), (1, 0.99, 0)])
def test_protected_capacity_rounds_down(capacity: int, share: float, expected: int) -> None:
    assert protected_capacity(capacity, share) == expected


def test_a_large_refresh_cannot_flush_notes_used_again(store: StateStore) -> None:
    for name in ("fav1.md", "fav2.md"):
        add(store, name, f"s-{name}")
    store.mark_used(NB, ["fav1.md", "fav2.md"])
    store.mark_used(NB, ["fav1.md", "fav2.md"])
    batch = [f"bulk{i:02d}.md" for i in range(20)]
    for name in batch:
        add(store, name, f"s-{name}")
    store.mark_used(NB, batch)
    order = [e.path for e in store.eviction_queue(NB)]
    assert order == [*batch, "fav1.md", "fav2.md"]
    assert store.next_eviction_candidate(NB) == "bulk00.md"


def test_new_uploads_are_evicted_before_used_ones_in_probation_lru_order(store: StateStore) -> None:
    add(store, "a.md", "s-a")
    add(store, "b.md", "s-b")
    add(store, "c.md", "s-c")
    store.mark_used(NB, ["a.md"])
    assert [e.path for e in store.eviction_queue(NB)] == ["b.md", "c.md", "a.md"]


def test_protected_share_zero_is_plain_lru(state_path: Path) -> None:
    with open_store(state_path, capacity=10, protected_share=0.0) as store:
        for name in ("a.md", "b.md", "c.md"):
            add(store, name, f"s-{name}")
        for _ in range(3):
            store.mark_used(NB, ["a.md"])
        store.mark_used(NB, ["b.md"])
        queue = store.eviction_queue(NB)
        assert {e.segment for e in queue} == {PROBATION}
        assert [e.path for e in queue] == ["c.md", "a.md", "b.md"]


def test_protected_share_one_keeps_every_reused_note_protected(state_path: Path) -> None:
    with open_store(state_path, capacity=3, protected_share=1.0) as store:
        for name in ("a.md", "b.md", "c.md"):
            add(store, name, f"s-{name}")
            store.mark_used(NB, [name])
            store.mark_used(NB, [name])
        assert [(e.path, e.segment) for e in store.eviction_queue(NB)] == [
            ("a.md", PROTECTED), ("b.md", PROTECTED), ("c.md", PROTECTED)]


def test_overflowing_protected_demotes_its_least_recent_note(state_path: Path) -> None:
    with open_store(state_path, capacity=4, protected_share=0.5) as store:
        for name in ("a.md", "b.md", "c.md", "d.md"):
            add(store, name, f"s-{name}")
        for name in ("a.md", "b.md", "c.md"):
            store.mark_used(NB, [name])
            store.mark_used(NB, [name])
        queue = [(e.path, e.segment) for e in store.eviction_queue(NB)]
        assert queue == [("d.md", PROBATION), ("a.md", PROBATION), ("b.md", PROTECTED), ("c.md", PROTECTED)]


def test_only_managed_active_paths_are_candidates_and_exclude_is_honoured(store: StateStore) -> None:
    add(store, "mine.md", "s1")
    add(store, "theirs.md", "s2", managed=False)
    add(store, "gone.md", "s3")
    store.set_status(NB, "s3", "stale")
    assert [e.path for e in store.eviction_queue(NB)] == ["mine.md"]
    assert store.next_eviction_candidate(NB) == "mine.md"
    assert store.next_eviction_candidate(NB, exclude={"mine.md"}) is None
    store.mark_used(NB, ["theirs.md", "unknown.md"])
    assert store.mappings_by_path(NB, "theirs.md")[0].use_count == 1
    assert [e.path for e in store.eviction_queue(NB)] == ["mine.md"]


def test_split_note_is_one_candidate_and_every_part_is_marked(store: StateStore) -> None:
    for part in range(3):
        add(store, "big.md", f"p{part}", part=part, part_count=3)
    store.mark_used(NB, ["big.md"])
    assert [m.use_count for m in store.mappings_by_path(NB, "big.md")] == [1, 1, 1]
    assert [e.path for e in store.eviction_queue(NB)] == ["big.md"]


def test_record_eviction_forgets_the_path_and_logs_newest_first(store: StateStore) -> None:
    add(store, "a.md", "s-a")
    add(store, "b.md", "s-b")
    store.record_eviction(NB, "a.md", "s-a", "capacity")
    store.record_eviction(NB, "b.md", "s-b", "capacity")
    assert store.all_mappings(NB) == []
    assert store.next_eviction_candidate(NB) is None
    log = store.recent_evictions(NB, 10)
    assert [(e.path, e.source_id, e.reason) for e in log] == [("b.md", "s-b", "capacity"), ("a.md", "s-a", "capacity")]
    assert store.recent_evictions(NB, 1)[0].path == "b.md"
    assert store.recent_evictions("nb-2", 10) == []


def test_eviction_log_is_bounded(store: StateStore) -> None:
    with store.step():
        for i in range(EVICTION_LOG_LIMIT + 5):
            store.record_eviction(NB, f"n{i}.md", f"s{i}", "capacity")
    log = store.recent_evictions(NB, EVICTION_LOG_LIMIT * 2)
    assert len(log) == EVICTION_LOG_LIMIT
    assert log[0].path == f"n{EVICTION_LOG_LIMIT + 4}.md"


def test_pending_deletions_queue(store: StateStore) -> None:
    store.queue_deletion(NB, "old-1", "replaced")
    store.queue_deletion(NB, "old-2", "replaced")
    store.queue_deletion(NB, "old-1", "again")
    store.queue_deletion("nb-2", "x", "replaced")
    assert [(d.source_id, d.reason) for d in store.pending_deletions(NB)] == [("old-1", "replaced"),
                                                                            ("old-2", "replaced")]
    store.deletion_done(NB, "old-1")
    assert [d.source_id for d in store.pending_deletions(NB)] == ["old-2"]


@given(st.data())
@settings(max_examples=examples(200), deadline=None)
def test_marking_with_only_the_least_recent_protected_entries_equals_marking_with_all(data) -> None:
    """`apply_use` given the used entries and the least recent protected ones, with the rest counted in
    `unseen_protected`, changes exactly what it changes when given every entry (what `mark_used` relies
    on to mark a few notes without loading a long protected segment)."""
    count = data.draw(st.integers(1, 30))
    entries = {f"n{i}": LruEntry(f"n{i}", data.draw(st.sampled_from([PROBATION, PROTECTED])), tick, uses)
               for i, (tick, uses) in enumerate(zip(data.draw(st.permutations(range(1, count + 1))),
                                                    data.draw(st.lists(st.integers(0, 3), min_size=count,
                                                                       max_size=count))))}
    used = data.draw(st.lists(st.sampled_from(sorted(entries)), max_size=5))
    cap = data.draw(st.integers(0, count))
    full = apply_use(entries, used, count + 1, cap)
    protected = sorted((e for e in entries.values() if e.segment == PROTECTED), key=lambda e: e.tick)
    given_used = {p: entries[p] for p in used}
    promoted = sum(1 for e in given_used.values() if e.segment != PROTECTED)
    overflow = max(0, len(protected) + promoted - cap)
    oldest = {e.path: e for e in protected[: overflow + len(given_used)]}
    partial_entries = {**oldest, **given_used}
    unseen = len(protected) - sum(1 for e in partial_entries.values() if e.segment == PROTECTED)
    assert apply_use(partial_entries, used, count + 1, cap, unseen) == full


def test_marking_a_few_notes_in_a_long_protected_segment_keeps_the_order(state_path: Path) -> None:
    with open_store(state_path, capacity=10, protected_share=0.5) as store:
        names = [f"n{i}.md" for i in range(8)]
        for name in names:
            add(store, name, f"s-{name}")
        store.mark_used(NB, names)
        store.mark_used(NB, names)  # n3..n7 protected (cap 5), n0..n2 demoted
        store.mark_used(NB, ["n0.md"])  # back to protected: n3 (least recent protected) is demoted
        assert [(e.path, e.segment) for e in store.eviction_queue(NB)] == [
            ("n1.md", PROBATION), ("n2.md", PROBATION), ("n3.md", PROBATION),
            ("n4.md", PROTECTED), ("n5.md", PROTECTED), ("n6.md", PROTECTED), ("n7.md", PROTECTED),
            ("n0.md", PROTECTED)]
