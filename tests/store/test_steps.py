"""Steps: one logical step is one transaction; nested steps join the outer one."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database
from tests.store.helpers import NB, add

from nlmsync.errors import StateError
from nlmsync.store import StateStore


class Boom(Exception):
    pass


def test_a_failing_step_leaves_nothing_behind(state_path: Path, store: StateStore) -> None:
    add(store, "a.md", "v1")
    with pytest.raises(Boom), store.step():
        add(store, "a.md", "v2")
        store.register_source_alias("v1", "v2")
        store.queue_deletion(NB, "v1", "replaced")
        raise Boom
    assert store.mappings_by_path(NB, "a.md")[0].source_id == "v1"
    assert store.aliases() == {}
    assert store.pending_deletions(NB) == []


def test_a_committed_step_is_visible_to_another_connection(state_path: Path, store: StateStore) -> None:
    with store.step():
        add(store, "a.md", "v1")
        with StateStore.open(state_path) as reader:
            assert reader.all_mappings(NB) == []
    with StateStore.open(state_path) as reader:
        assert [m.source_id for m in reader.all_mappings(NB)] == ["v1"]


def test_a_caught_inner_failure_rolls_back_only_the_inner_step(store: StateStore) -> None:
    with store.step():
        add(store, "a.md", "v1")
        with pytest.raises(Boom), store.step():
            add(store, "b.md", "v2")
            raise Boom
        add(store, "c.md", "v3")
    assert [m.path for m in store.all_mappings(NB)] == ["a.md", "c.md"]
    assert [e.path for e in store.eviction_queue(NB)] == ["a.md", "c.md"]


def test_a_read_only_state_file_is_a_clear_state_error(state_path: Path) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "v1")
    read_only = StateStore(Database(sqlite3.connect(f"{state_path.resolve().as_uri()}?mode=ro", uri=True,
                                                    check_same_thread=False)))
    with pytest.raises(StateError, match="cannot write the state file"):
        add(read_only, "b.md", "v2")
    assert [m.path for m in read_only.all_mappings(NB)] == ["a.md"]
    read_only.close()
