"""Settings the store depends on: bounds are validated before a store sees them, and a store reopened
with a smaller capacity or protected share brings its queue within the new bounds (settings normalization)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from tests.store.helpers import NB, add, open_store

from nlmsync.config import Settings
from nlmsync.store._lru import PROBATION, PROTECTED


@pytest.mark.parametrize(("field", "value"), [
    ("capacity", 0), ("protected_share", 1.5), ("protected_share", -0.1), ("max_conversations", 0),
    ("max_messages_per_conversation", 0), ("max_query_records_per_conversation", 0), ("max_aliases", 0),
])
def test_out_of_range_store_bounds_are_refused_naming_the_field(field: str, value: float) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(**{field: value})
    assert field in str(caught.value)


def test_a_smaller_capacity_keeps_eviction_order_and_the_next_use_trims_the_protected_segment(
        state_path: Path) -> None:
    favourites = ["a.md", "b.md", "c.md", "d.md", "e.md", "f.md"]
    with open_store(state_path, capacity=10, protected_share=0.7) as store:
        for name in favourites:
            add(store, name, f"s-{name}")
            store.mark_used(NB, [name])
            store.mark_used(NB, [name])
        add(store, "new.md", "s-new")
        assert [e.segment for e in store.eviction_queue(NB)] == [PROBATION] + [PROTECTED] * 6
    with open_store(state_path, capacity=4, protected_share=0.5) as store:
        assert store.protected_capacity == 2
        assert [e.path for e in store.eviction_queue(NB)] == ["new.md", *favourites]
        store.mark_used(NB, ["new.md"])
        queue = store.eviction_queue(NB)
        assert [e.path for e in queue] == ["new.md", *favourites]
        assert [(e.path, e.segment) for e in queue if e.segment == PROTECTED] == [("e.md", PROTECTED),
                                                                                  ("f.md", PROTECTED)]
