"""Property test (hypothesis stateful): any sequence of register / replace / alias / rename / evict /
reconcile / use / compact keeps the store's invariants:

- every resolved id is a fixed point, and the alias map is flat (no alias points at an alias);
- no alias cycle, and no more aliases than the hard cap;
- no path maps to two live sources (one part_count per path, no active source id held twice);
- every queued eviction candidate is a managed, active mapping, and every managed path is queued;
- compaction (explicit, or due after a turn) never changes what a kept reference resolves to.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from sqlite_utils import Database
from tests.hypothesis_profiles import examples

from nlmsync.config import Settings
from nlmsync.store import StateStore
from nlmsync.store.db import migrate

PATHS = ["a.md", "b.md", "c.md", "dir/d.md", "e.md"]
NOTEBOOKS = ["nb1", "nb2"]
paths = st.sampled_from(PATHS)
notebooks = st.sampled_from(NOTEBOOKS)


class StoreMachine(RuleBasedStateMachine):
    @initialize(share=st.sampled_from([0.0, 0.5, 1.0]), max_aliases=st.sampled_from([4, 5000]))
    def open_store(self, share: float, max_aliases: int) -> None:
        db = Database(memory=True)
        migrate(db)
        self.max_aliases = max_aliases
        self.store = StateStore(db, Settings(capacity=4, protected_share=share, max_aliases=max_aliases,
                                             max_conversations=2, max_query_records_per_conversation=2))
        self.counter = itertools.count()
        self.ids: list[str] = ["ghost"]

    def _new_id(self) -> str:
        source_id = f"s{next(self.counter)}"
        self.ids.append(source_id)
        return source_id

    @rule(nb=notebooks, path=paths, parts=st.integers(1, 3), managed=st.booleans())
    def upload_or_replace(self, nb: str, path: str, parts: int, managed: bool) -> None:
        store = self.store
        with store.step():
            old = store.mappings_by_path(nb, path)
            if len(old) > parts:
                store.remove_mappings(nb, path)
            for part in range(parts):
                new_id = self._new_id()
                store.upsert_mapping(notebook_id=nb, path=path, part=part, part_count=parts, source_id=new_id,
                                     content_hash=f"h{new_id}", title=path, managed=managed)
                if part < len(old):
                    store.register_source_alias(old[part].source_id, new_id)
                    store.queue_deletion(nb, old[part].source_id, "replaced")

    @rule(nb=notebooks, old=paths, new=paths)
    def rename(self, nb: str, old: str, new: str) -> None:
        self.store.rename_mapping(nb, old, new)

    @rule(old=paths, new=st.sampled_from([*PATHS, "x.txt"]))
    def vault_rename(self, old: str, new: str) -> None:
        self.store.apply_vault_rename(old, new)

    @rule(nb=notebooks, source=paths, destination=paths)
    def rebind_by_hash(self, nb: str, source: str, destination: str) -> None:
        rows = self.store.mappings_by_path(nb, source)
        if len(rows) == 1 and not self.store.mappings_by_path(nb, destination):
            row = rows[0]
            self.store.upsert_mapping(row, path=destination)

    @rule(data=st.data())
    def alias(self, data: st.DataObject) -> None:
        previous = data.draw(st.sampled_from(self.ids))
        current = data.draw(st.sampled_from(self.ids))
        self.store.register_source_alias(previous, current)

    @rule(nb=notebooks, used=st.lists(paths, max_size=3))
    def mark_used(self, nb: str, used: list[str]) -> None:
        self.store.mark_used(nb, used)

    @rule(nb=notebooks, exclude=st.sets(paths, max_size=2))
    def evict(self, nb: str, exclude: set[str]) -> None:
        path = self.store.next_eviction_candidate(nb, exclude)
        if path is None:
            return
        assert path not in exclude
        rows = self.store.mappings_by_path(nb, path)
        assert rows and all(r.managed for r in rows) and any(r.status == "active" for r in rows)
        with self.store.step():
            for row in rows:
                self.store.record_eviction(nb, path, row.source_id, "capacity")

    @rule(nb=notebooks, data=st.data())
    def reconcile(self, nb: str, data: st.DataObject) -> None:
        remote = data.draw(st.sets(st.sampled_from(self.ids)))
        result = self.store.reconcile(nb, remote)
        assert all(self.store.resolve_source_id(m.source_id) in remote for m in result.active)

    def _resolutions(self) -> dict[tuple[object, ...], str]:
        """What every stored reference resolves to: mapping rows by (notebook, path, part), query-record
        ids by (record, position)."""
        found: dict[tuple[object, ...], str] = {}
        for nb in NOTEBOOKS:
            for m in self.store.all_mappings(nb):
                found[("mapping", nb, m.path, m.part)] = self.store.resolve_source_id(m.source_id)
        for row_id, raw in self.store.db.execute("SELECT id, source_ids FROM query_records"):
            for position, source_id in enumerate(json.loads(raw)):
                found[("record", row_id, position)] = self.store.resolve_source_id(source_id)
        return found

    def _assert_compaction_kept_what_is_needed(self, before: dict[tuple[object, ...], str]) -> None:
        """Compaction may drop records, never change what a kept reference resolves to. (One exception
        by design: a row whose resolution another row of its notebook holds directly may keep its own id.)"""
        after = self._resolutions()
        for key, resolved in after.items():
            if key in before and resolved != before[key]:
                assert key[0] == "mapping", f"{key}: {before[key]} became {resolved}"
                held = {m.source_id for m in self.store.all_mappings(str(key[1]))}
                assert before[key] in held, f"{key}: {before[key]} became {resolved}"

    @rule(nb=notebooks, data=st.data())
    def record_turn(self, nb: str, data: st.DataObject) -> None:
        aliased = sorted(self.store.aliases())  # ids whose alias only this record might keep alive
        ids = st.one_of(st.sampled_from(aliased), st.sampled_from(self.ids)) if aliased else st.sampled_from(self.ids)
        sent = data.draw(st.lists(ids, max_size=3))
        conversation = data.draw(st.sampled_from(["c1", "c2", "c3"]))
        before = self._resolutions()
        self.store.record_turn(nb, conversation, "q", "a", sent, [], {})
        self._assert_compaction_kept_what_is_needed(before)

    @rule()
    def compact(self) -> None:
        before = self._resolutions()
        self.store.compact()
        self._assert_compaction_kept_what_is_needed(before)

    # --- invariants -------------------------------------------------------------------------------
    @invariant()
    def resolved_ids_are_fixed_points_and_aliases_are_flat(self) -> None:
        aliases = self.store.aliases()
        for source_id in [*self.ids, *aliases]:
            resolved = self.store.resolve_source_id(source_id)
            assert resolved not in aliases
            assert self.store.resolve_source_id(resolved) == resolved
        assert not set(aliases.values()) & set(aliases)
        assert len(aliases) <= self.max_aliases

    @invariant()
    def no_alias_cycle(self) -> None:
        aliases = self.store.aliases()
        for start in aliases:
            seen = {start}
            current = start
            while current in aliases:
                current = aliases[current]
                assert current not in seen, f"alias cycle through {start}"
                seen.add(current)

    @invariant()
    def no_path_maps_to_two_live_sources(self) -> None:
        for nb in NOTEBOOKS:
            rows = self.store.all_mappings(nb)
            for path in {r.path for r in rows}:
                mine = [r for r in rows if r.path == path]
                assert len({r.part_count for r in mine}) == 1
                assert len({r.part for r in mine}) == len(mine)
                assert all(r.part < r.part_count for r in mine)
            active = Counter(r.source_id for r in rows if r.status == "active")
            assert all(n == 1 for n in active.values())

    @invariant()
    def every_queued_candidate_is_a_managed_active_mapping(self) -> None:
        for nb in NOTEBOOKS:
            rows = self.store.all_mappings(nb)
            live_managed = {r.path for r in rows if r.managed and r.status == "active"}
            queue = [e.path for e in self.store.eviction_queue(nb)]
            assert len(queue) == len(set(queue))
            assert set(queue) == live_managed
            queued_table = {r[0] for r in self.store.db.execute(
                "SELECT path FROM lru_entries WHERE notebook_id = ?", [nb])}
            assert queued_table == {r.path for r in rows if r.managed}
            candidate = self.store.next_eviction_candidate(nb)
            assert candidate is None or candidate in live_managed

    def teardown(self) -> None:
        self.store.close()


StoreMachine.TestCase.settings = settings(max_examples=examples(40), stateful_step_count=25, deadline=None,
                                          suppress_health_check=[HealthCheck.too_slow])
test_store_invariants = StoreMachine.TestCase
