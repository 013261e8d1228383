"""Reconciliation canonicalization: resolve before the remote check, rewrite, or mark stale."""

from __future__ import annotations

from tests.store.helpers import NB, add

from nlmsync.store import StateStore


def test_entry_holding_a_historical_alias_is_canonicalized_not_marked_stale(store: StateStore) -> None:
    add(store, "a.md", "v1")
    store.register_source_alias("v1", "v2")
    store.register_source_alias("v2", "v3")
    result = store.reconcile(NB, {"v3"})
    assert [(m.path, m.source_id, m.status) for m in result.active] == [("a.md", "v3", "active")]
    assert [m.path for m in result.canonicalized] == ["a.md"]
    assert result.stale == []
    assert store.mappings_by_path(NB, "a.md")[0].source_id == "v3"


def test_missing_sources_are_marked_stale_and_come_back_active(store: StateStore) -> None:
    add(store, "a.md", "s-a")
    add(store, "b.md", "s-b")
    result = store.reconcile(NB, {"s-a", "unrelated"})
    assert [m.path for m in result.stale] == ["b.md"]
    assert store.mappings_by_path(NB, "b.md")[0].status == "stale"
    assert store.next_eviction_candidate(NB) == "a.md"
    result = store.reconcile(NB, {"s-a", "s-b"})
    assert [m.path for m in result.active] == ["a.md", "b.md"]
    assert store.mappings_by_path(NB, "b.md")[0].status == "active"


def test_only_the_given_notebook_is_touched(store: StateStore) -> None:
    add(store, "a.md", "s-a")
    add(store, "a.md", "s-other", notebook_id="nb-2")
    store.reconcile(NB, set())
    assert store.mappings_by_path("nb-2", "a.md")[0].status == "active"


def test_two_rows_resolving_to_one_live_id_leave_one_claimant(store: StateStore) -> None:
    add(store, "a.md", "old-a")
    add(store, "b.md", "live")
    store.register_source_alias("old-a", "live")
    result = store.reconcile(NB, {"live"})
    assert [(m.path, m.source_id) for m in result.active] == [("b.md", "live")]
    assert [(m.path, m.source_id) for m in result.stale] == [("a.md", "old-a")]


def test_reconcile_of_split_note_checks_each_part(store: StateStore) -> None:
    add(store, "big.md", "p0", part=0, part_count=2)
    add(store, "big.md", "p1", part=1, part_count=2)
    result = store.reconcile(NB, {"p1"})
    assert [(m.part, m.status) for m in store.mappings_by_path(NB, "big.md")] == [(0, "stale"), (1, "active")]
    assert len(result.active) == len(result.stale) == 1


def _rows(store: StateStore) -> list[tuple[str, int, str, str]]:
    return [(m.path, m.part, m.source_id, m.status) for m in store.all_mappings(NB)]


def test_reconcile_needed_is_false_only_when_reconcile_changes_nothing(store: StateStore) -> None:
    """A run asks `reconcile_needed` (one column) before `reconcile` (every row built): False must mean that
    reconcile would change nothing, for each way a row can be out of step with the listing."""
    add(store, "a.md", "s-a")
    add(store, "b.md", "s-b")
    add(store, "c.md", "old-c")
    add(store, "d.md", "s-d")
    store.register_source_alias("old-c", "s-c")
    cases = [{"s-a", "s-b", "s-c", "s-d"}, {"s-a", "s-b", "s-d"}, {"s-a", "s-b", "s-c", "s-d", "other"}, set()]
    for remote in cases:
        store.reconcile(NB, remote)  # in step with `remote`: nothing left to do
        assert not store.reconcile_needed(NB, remote)
        before = _rows(store)
        store.reconcile(NB, remote)
        assert _rows(store) == before
    store.reconcile(NB, {"s-a", "s-b", "s-c", "s-d"})
    assert store.reconcile_needed(NB, {"s-a", "s-c", "s-d"})  # b.md's source is gone: stale
    store.reconcile(NB, {"s-a", "s-c", "s-d"})
    assert store.reconcile_needed(NB, {"s-a", "s-b", "s-c", "s-d"})  # b.md's source is back: active
    store.register_source_alias("s-d", "s-d2")
    assert store.reconcile_needed(NB, {"s-a", "s-b", "s-c", "s-d"})  # d.md holds an alias now
    store.reconcile(NB, {"s-a", "s-b", "s-c", "s-d2"})
    assert not store.reconcile_needed(NB, {"s-a", "s-b", "s-c", "s-d2"})


def test_reconcile_is_needed_for_a_row_holding_a_replaced_id_or_two_rows_holding_one_id(store: StateStore) -> None:
    store.register_source_alias("s-old", "s-new")
    add(store, "a.md", "s-old")  # recorded after the replacement (another device's state file, say)
    assert store.reconcile_needed(NB, ["s-old"])  # active and listed, but it holds an id since replaced
    store.reconcile(NB, ["s-new"])
    assert not store.reconcile_needed(NB, ["s-new"])
    add(store, "b.md", "s-b")
    add(store, "c.md", "s-c")
    store.db.execute("UPDATE source_mappings SET source_id = 's-b' WHERE path = 'c.md'")  # two rows, one source
    assert store.reconcile_needed(NB, iter(["s-new", "s-b"]))
