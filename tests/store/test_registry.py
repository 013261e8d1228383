"""The source registry: lookups by path, id and hash; parts; moves; the mapping following a note renamed in the vault."""

from __future__ import annotations

import sqlite3
from typing import Any

import pytest
from tests.store.helpers import NB, add

from nlmsync.store import StateStore
from nlmsync.store._lru import PROBATION, PROTECTED


def test_upsert_then_lookup_by_path_id_and_hash(store: StateStore) -> None:
    a = add(store, "notes/a.md", "s-a", content_hash="hash-1")
    add(store, "notes/b.md", "s-b", content_hash="hash-1")
    add(store, "notes/c.md", "s-c", notebook_id="other")
    assert store.mappings_by_path(NB, "notes/a.md") == [a]
    assert store.mappings_by_path(NB, "notes/c.md") == []
    assert [m.path for m in store.all_mappings(NB)] == ["notes/a.md", "notes/b.md"]
    assert store.mapping_by_source_id(NB, "s-a") == a
    assert store.mapping_by_source_id(NB, "s-c") is None
    assert [m.path for m in store.mappings_by_hash(NB, "hash-1")] == ["notes/a.md", "notes/b.md"]
    assert store.mappings_by_hash(NB, "nope") == []


def test_lookup_by_source_id_follows_aliases_both_ways(store: StateStore) -> None:
    add(store, "a.md", "old")
    store.register_source_alias("old", "new")
    found = store.mapping_by_source_id(NB, "new")
    assert found is not None and found.path == "a.md"
    found = store.mapping_by_source_id(NB, "old")
    assert found is not None and found.source_id == "old"


def test_split_note_has_one_row_per_part_and_shrinking_drops_extra_parts(store: StateStore) -> None:
    for part in range(3):
        add(store, "big.md", f"s{part}", part=part, part_count=3)
    assert [m.part for m in store.mappings_by_path(NB, "big.md")] == [0, 1, 2]
    add(store, "big.md", "whole", part=0, part_count=1)
    assert [(m.part, m.source_id) for m in store.mappings_by_path(NB, "big.md")] == [(0, "whole")]


def test_binding_a_source_to_another_path_moves_it_with_its_usage(store: StateStore) -> None:
    add(store, "old.md", "s1")
    store.mark_used(NB, ["old.md"])
    moved = add(store, "new.md", "s1")
    assert store.mappings_by_path(NB, "old.md") == []
    assert moved.use_count == 1
    assert [e.path for e in store.eviction_queue(NB)] == ["new.md"]


def test_a_source_moved_to_another_path_keeps_its_place_in_the_eviction_queue(store: StateStore) -> None:
    add(store, "fav.md", "s-fav")
    store.mark_used(NB, ["fav.md"])
    store.mark_used(NB, ["fav.md"])
    add(store, "renamed/fav.md", "s-fav")
    add(store, "later.md", "s-later")
    assert [(e.path, e.segment) for e in store.eviction_queue(NB)] == [("later.md", PROBATION),
                                                                        ("renamed/fav.md", PROTECTED)]


def test_upsert_keeps_usage_of_the_existing_row(store: StateStore) -> None:
    add(store, "a.md", "v1")
    store.mark_used(NB, ["a.md"])
    replaced = add(store, "a.md", "v2", use_count=0)
    assert replaced.use_count == 1 and replaced.last_used is not None
    assert store.mappings_by_path(NB, "a.md")[0].source_id == "v2"


@pytest.mark.parametrize("bad", [{"status": "gone"}, {"part": 2, "part_count": 2}, {"part_count": 0}])
def test_invalid_mapping_is_rejected_before_any_write(store: StateStore, bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        add(store, "a.md", "s1", **bad)
    assert store.all_mappings(NB) == []


def test_rename_mapping_moves_rows_and_queue_position(store: StateStore) -> None:
    add(store, "a.md", "s-a")
    add(store, "b.md", "s-b")
    add(store, "c.md", "s-c")
    displaced = store.rename_mapping(NB, "a.md", "b.md")
    assert [m.source_id for m in displaced] == ["s-b"]
    assert store.mappings_by_path(NB, "a.md") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "b.md")] == ["s-a"]
    assert [e.path for e in store.eviction_queue(NB)] == ["b.md", "c.md"]
    assert store.rename_mapping(NB, "missing.md", "c.md") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "c.md")] == ["s-c"]


def test_vault_rename_md_to_md_moves_the_mapping_in_every_notebook(store: StateStore) -> None:
    add(store, "a.md", "s1")
    add(store, "a.md", "s2", notebook_id="nb-2")
    assert store.apply_vault_rename("a.md", "dir/a2.md") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "dir/a2.md")] == ["s1"]
    assert [m.source_id for m in store.mappings_by_path("nb-2", "dir/a2.md")] == ["s2"]
    assert store.pending_deletions(NB) == []


def test_vault_rename_md_to_other_leaves_the_mapping_as_a_deletion_does(store: StateStore) -> None:
    add(store, "a.md", "s1")
    assert store.apply_vault_rename("a.md", "a.txt") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "a.md")] == ["s1"]  # until refresh --all
    assert store.pending_deletions(NB) == []
    assert store.apply_vault_rename("x.txt", "x.md") == []


def test_vault_rename_of_an_attachment_to_an_attachment_moves_the_mapping(store: StateStore) -> None:
    add(store, "papers/a.pdf", "s1")
    assert store.apply_vault_rename("papers/a.pdf", "read/a.pdf") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "read/a.pdf")] == ["s1"]
    assert store.apply_vault_rename("read/a.pdf", "read/a.md") == []  # a note is another kind of file: left
    assert [m.source_id for m in store.mappings_by_path(NB, "read/a.pdf")] == ["s1"]


def test_vault_rename_knows_a_note_in_any_letter_case(store: StateStore) -> None:
    """`Note.MD` is a note to the walk, so it is one to the vault-rename mapping too: its mapping moves (the registry once compared
    the suffix case-sensitively and kept a stale row)."""
    add(store, "Old.MD", "s1")
    assert store.apply_vault_rename("Old.MD", "New.md") == []
    assert [m.source_id for m in store.mappings_by_path(NB, "New.md")] == ["s1"]
    assert store.mappings_by_path(NB, "Old.MD") == []


def test_set_status_and_remove(store: StateStore) -> None:
    add(store, "a.md", "s1")
    assert store.set_status(NB, "s1", "stale") == 1
    assert store.mappings_by_path(NB, "a.md")[0].status == "stale"
    with pytest.raises(ValueError):
        store.set_status(NB, "s1", "dead")
    assert [m.source_id for m in store.remove_mappings(NB, "a.md")] == ["s1"]
    assert store.all_mappings(NB) == []
    assert store.eviction_queue(NB) == []


def _rows(store: StateStore) -> tuple[object, ...]:
    mappings = store.db.execute("SELECT * FROM source_mappings ORDER BY path, part").fetchall()
    queue = store.db.execute("SELECT notebook_id, path, segment, tick FROM lru_entries ORDER BY tick").fetchall()
    return tuple(mappings), tuple(queue)


def test_new_rows_are_recorded_and_queued_as_upserting_them_one_by_one_would(tmp_path) -> None:
    from nlmsync.store import SourceMapping, open_database

    rows = [SourceMapping(notebook_id=NB, path="a.md", source_id="s-a", content_hash="h-a", title="a"),
            SourceMapping(notebook_id=NB, path="big.md", source_id="s-b0", content_hash="h-b0", title="b 1",
                          part=0, part_count=2),
            SourceMapping(notebook_id=NB, path="big.md", source_id="s-b1", content_hash="h-b1", title="b 2",
                          part=1, part_count=2),
            SourceMapping(notebook_id=NB, path="hand.md", source_id="s-h", content_hash="h-h", title="h",
                          managed=False)]
    one_by_one = StateStore(open_database(tmp_path / "one.db"))
    at_once = StateStore(open_database(tmp_path / "once.db"))
    for row in rows:
        one_by_one.upsert_mapping(row)
    at_once.add_new_mappings(rows)
    assert _rows(at_once) == _rows(one_by_one)
    assert [e.path for e in at_once.eviction_queue(NB)] == ["a.md", "big.md"]
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):  # a path with rows is not new: refused, kept
        at_once.add_new_mappings(rows[:1])
    assert _rows(at_once) == _rows(one_by_one)
    one_by_one.close()
    at_once.close()


def test_lookup_by_source_id_prefers_the_row_of_the_id_or_its_resolution_then_the_first_path(
        store: StateStore) -> None:
    add(store, "z.md", "p3")  # added first: the answer does not depend on the rows' order in the file
    add(store, "a.md", "p1")
    for previous in ("p1", "p2", "p3"):
        store.register_source_alias(previous, "t")  # three replaced ids, one current
    # no row holds p2 or t: a row holding another id of the chain, the first by path
    found = store.mapping_by_source_id(NB, "p2")
    assert found is not None and (found.path, found.source_id) == ("a.md", "p1")
    add(store, "m.md", "t")
    found = store.mapping_by_source_id(NB, "p2")  # the row of its resolution wins over the other ids' rows
    assert found is not None and (found.path, found.source_id) == ("m.md", "t")
    found = store.mapping_by_source_id(NB, "p3")  # the rows of the id and of its resolution: the first by path
    assert found is not None and (found.path, found.source_id) == ("m.md", "t")


def test_rows_of_one_hash_come_in_path_order(store: StateStore) -> None:
    add(store, "notes/b.md", "s-b", content_hash="hash-1")
    add(store, "notes/a.md", "s-a", content_hash="hash-1", part=0, part_count=2)
    add(store, "notes/a.md", "s-a2", content_hash="hash-1", part=1, part_count=2)
    assert [(m.path, m.part) for m in store.mappings_by_hash(NB, "hash-1")] == [
        ("notes/a.md", 0), ("notes/a.md", 1), ("notes/b.md", 0)]
