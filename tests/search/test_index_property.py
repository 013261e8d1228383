"""Property of the incremental index: after any sequence of create/modify/delete/rename events, the incrementally maintained
index — and a new process hydrated from its cache — ranks every query exactly as an index built from
scratch on the final vault."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.config import Settings
from nlmsync.search import index as index_module
from nlmsync.search.index import NoteIndex
from nlmsync.store.db import open_database

WORDS = ["heap", "sort", "heapsort", "kimchi", "김치찌개", "ヒープ", "ソート", "e", "mc²", "river", "tea", "Tea"]
PATHS = ["a.md", "b.md", "notes/c.md", "notes/deep/d.md", "노트.md", "x.txt"]
QUERIES = ["heap sort", "heapsort", "김치", "ヒープソート", "E = mc²", "tea river", "notes", "deep d"]

texts = st.lists(st.sampled_from(WORDS + ["\n# ", "\n"]), min_size=0, max_size=12).map(" ".join)
events = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(PATHS), texts),
        st.tuples(st.just("delete"), st.sampled_from(PATHS), st.just("")),
        st.tuples(st.just("rename"), st.sampled_from(PATHS), st.sampled_from(PATHS)),
        st.tuples(st.just("sync"), st.just(""), st.just("")),
    ),
    max_size=25,
)


class Vault:
    """Applies events to disk and reports them to the index as a file watcher would."""

    def __init__(self, root: Path, index: NoteIndex) -> None:
        self.root = root
        self.index = index
        self.clock = 1_700_000_000_000_000_000

    def write(self, rel: str, text: str) -> None:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        self.clock += 1_000_000
        os.utime(path, ns=(self.clock, self.clock))
        self.index.mark_path_modified(rel)

    def delete(self, rel: str) -> None:
        if (self.root / rel).exists():
            (self.root / rel).unlink()
            self.index.mark_path_deleted(rel)

    def rename(self, old: str, new: str) -> None:
        if old == new or not (self.root / old).exists():
            return
        (self.root / new).parent.mkdir(parents=True, exist_ok=True)
        (self.root / old).replace(self.root / new)
        self.index.mark_path_deleted(old)
        self.index.mark_path_modified(new)


def rankings(index: NoteIndex) -> list[list[tuple[str, float, tuple[str, ...]]]]:
    return [[(h.path, h.score, h.matched_terms) for h in index.search(q)] for q in QUERIES]


@pytest.mark.parametrize("merge_threshold", [1, 512])
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(initial=st.lists(st.tuples(st.sampled_from(PATHS), texts), max_size=5), steps=events)
def test_incremental_equals_from_scratch(merge_threshold: int, initial: list[tuple[str, str]],
                                         steps: list[tuple[str, str, str]],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", merge_threshold)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "vault"
        root.mkdir()
        state = Path(tmp) / "state.db"
        live = NoteIndex(root, open_database(state), Settings(vault=root, full_rescan_every=1000))
        vault = Vault(root, live)
        for rel, text in initial:
            vault.write(rel, text)
        live.sync()
        for kind, a, b in steps:
            if kind == "write":
                vault.write(a, b)
            elif kind == "delete":
                vault.delete(a)
            elif kind == "rename":
                vault.rename(a, b)
            else:
                live.search("heap")
        expected = rankings(NoteIndex(root, None, Settings(vault=root)))
        assert rankings(live) == expected
        rehydrated = NoteIndex(root, open_database(state), Settings(vault=root))
        assert rankings(rehydrated) == expected
        assert rehydrated.notes_read == 0
