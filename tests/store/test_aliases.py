"""Alias chains (resolution and registration): long chains, cycles, rewrite on registration; the pure plan and the store."""

from __future__ import annotations

from nlmsync.store import StateStore
from nlmsync.store._aliases import plan_alias_registration, resolve_chain


def _register(aliases: dict[str, str], previous: str, current: str) -> str:
    def referrers(source_id: str) -> list[str]:
        return [a for a, t in aliases.items() if t == source_id]

    plan = plan_alias_registration(aliases.get, referrers, previous, current)
    for alias in plan.delete:
        del aliases[alias]
    aliases.update(plan.set)
    return plan.resolved


def test_resolve_follows_a_long_chain_to_its_end() -> None:
    chain = {f"s{i}": f"s{i + 1}" for i in range(1000)}
    assert resolve_chain(chain.get, "s0") == "s1000"
    assert resolve_chain(chain.get, "s999") == "s1000"
    assert resolve_chain(chain.get, "unknown") == "unknown"


def test_resolve_stops_on_a_cycle() -> None:
    cycle = {"a": "b", "b": "c", "c": "a"}
    assert resolve_chain(cycle.get, "a") == "c"
    assert resolve_chain(cycle.get, "b") == "a"
    assert resolve_chain({"a": "a"}.get, "a") == "a"


def test_registration_resolves_current_first_and_rewrites_aliases_to_previous() -> None:
    aliases: dict[str, str] = {}
    _register(aliases, "v1", "v2")
    _register(aliases, "v2", "v3")
    assert aliases == {"v1": "v3", "v2": "v3"}
    _register(aliases, "old", "v1")
    assert aliases["old"] == "v3"


def test_replaced_chain_built_one_version_at_a_time_stays_flat() -> None:
    aliases: dict[str, str] = {}
    for i in range(200):
        _register(aliases, f"v{i}", f"v{i + 1}")
    assert set(aliases.values()) == {"v200"}
    assert len(aliases) == 200


def test_registering_back_to_an_older_id_never_forms_a_cycle() -> None:
    aliases: dict[str, str] = {}
    _register(aliases, "a", "b")
    _register(aliases, "x", "a")
    resolved = _register(aliases, "b", "a")
    assert resolved == "a"
    assert aliases == {"b": "a", "x": "a"}
    for source_id in ("a", "b", "x"):
        assert resolve_chain(aliases.get, source_id) == "a"


def test_self_alias_is_a_no_op() -> None:
    aliases = {"a": "b"}
    assert _register(aliases, "b", "b") == "b"
    assert aliases == {"a": "b"}


def test_store_registration_matches_the_pure_plan(store: StateStore) -> None:
    assert store.register_source_alias("v1", "v2") == "v2"
    assert store.register_source_alias("v2", "v3") == "v3"
    assert store.aliases() == {"v1": "v3", "v2": "v3"}
    assert store.resolve_source_id("v1") == "v3"
    assert store.register_source_alias("v3", "v1") == "v1"
    assert store.aliases() == {"v2": "v1", "v3": "v1"}
    assert store.resolve_source_id("v2") == "v1"


def test_store_resolution_survives_a_cycle_written_by_hand(store: StateStore) -> None:
    store.db.conn.executemany("INSERT INTO source_aliases (previous, current, registered_at) VALUES (?, ?, 't')",
                              [("a", "b"), ("b", "a")])
    store.db.conn.commit()
    assert store.resolve_source_id("a") == "b"
    assert store.resolve_source_id("b") == "a"


def test_the_mappings_of_a_notebook_come_with_their_source_ids_resolved_in_path_order(store: StateStore) -> None:
    from tests.store.helpers import NB, add

    add(store, "b.md", "s-b")
    add(store, "a.md", "old-a")
    add(store, "c.md", "s-c", notebook_id="nb-other")
    store.register_source_alias("old-a", "new-a")
    rows = store.mappings_with_resolved_ids(NB)
    assert [(row[0].path, row[0].source_id, row[1]) for row in rows] == [("a.md", "old-a", "new-a"),
                                                                         ("b.md", "s-b", "s-b")]
