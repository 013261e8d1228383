"""The cold answer (`search/cold.py`): a process's first query answered straight from the state file, without
loading the index, gives the very hits the loaded index gives, and only when the vault did not change."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.config import Settings
from nlmsync.search import index as index_module
from nlmsync.search.cold import vault_unchanged
from nlmsync.search.index import NoteIndex
from nlmsync.search.snapshot_parts import SnapshotParts
from nlmsync.store import index_codec
from nlmsync.store.db import open_database
from nlmsync.store.transaction import transaction
from nlmsync.vault import list_vault

QUERIES = ["How does heapsort work?", "김치찌개", "ヒープソート", "E = mc²", "meeting re-indexing", "sourdough",
           "the and of", "notes deep", "tapir"]

Hits = list[tuple[str, float, tuple[str, ...]]]


def fresh(vault: Path, **settings: object) -> NoteIndex:
    """A NoteIndex as a new process makes it: a new connection to the state file."""
    return NoteIndex(vault, open_database(vault / ".nlmsync" / "state.db"), Settings(vault=vault, **settings))


def hits(index: NoteIndex, query: str, limit: int | None = None) -> Hits:
    return [(h.path, h.score, h.matched_terms) for h in index.search(query, limit=limit)]


def cold(vault: Path, query: str, limit: int | None = None) -> Hits:
    """The first query of a new process, which must have been answered without loading the index."""
    index = fresh(vault)
    found = hits(index, query, limit)
    assert not index.loaded, f"{query!r}: the index was loaded"
    return found


def from_scratch(vault: Path, query: str, limit: int | None = None) -> Hits:
    return hits(NoteIndex(vault, None, Settings(vault=vault)), query, limit)


def touch(path: Path, text: str) -> None:
    old = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(old + 10_000_000, old + 10_000_000))


@pytest.mark.parametrize("merge_threshold", [1, 512], ids=["snapshot", "rows-only"])
def test_cold_hits_are_the_loaded_index_hits(vault: Path, merge_threshold: int,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", merge_threshold)
    fresh(vault).sync()
    for query in QUERIES:
        for limit in (None, 1, 3):
            assert cold(vault, query, limit) == from_scratch(vault, query, limit)


def small_blocks(monkeypatch: pytest.MonkeyPatch, *, wide: bool = False) -> None:
    """Blocks of a few terms and postings (a term longer than a block fills one alone), and with `wide` the
    frequencies' positions stored as uint32: the fixture vault then takes every branch of the format."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    monkeypatch.setattr(index_codec, "_BLOCK_TERM_BYTES", 40)
    monkeypatch.setattr(index_codec, "_BLOCK_POSTINGS", 3)
    if wide:
        monkeypatch.setattr(index_codec, "_NARROW_VALUES", 1)


@pytest.mark.parametrize("wide", [False, True], ids=["uint16", "uint32"])
def test_a_snapshot_of_many_blocks_answers_cold_and_loaded_as_from_scratch(vault: Path, wide: bool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    small_blocks(monkeypatch, wide=wide)
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    assert db.execute("SELECT count(*) FROM index_blocks").fetchone()[0] > 100
    for query in QUERIES:
        assert cold(vault, query) == from_scratch(vault, query)
    loaded = fresh(vault)
    loaded.sync()
    assert loaded.notes_read == 0
    assert [hits(loaded, q) for q in QUERIES] == [from_scratch(vault, q) for q in QUERIES]


def test_a_snapshot_with_as_many_frequencies_as_fit_in_uint16_answers_as_from_scratch(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bound of the narrow positions, met exactly: the reader takes the width the writer chose."""
    small_blocks(monkeypatch)
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    values = len(db.execute("SELECT tf_values FROM index_snapshot").fetchone()[0]) // 8
    db.close()
    monkeypatch.setattr(index_codec, "_NARROW_VALUES", values)
    shutil.rmtree(vault / ".nlmsync")  # the same index written again, the bound now its number of frequencies
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    assert len(db.execute("SELECT tf_values FROM index_snapshot").fetchone()[0]) // 8 == values
    db.close()
    for query in QUERIES:
        assert cold(vault, query) == from_scratch(vault, query)


def test_a_fresh_process_reads_the_notes_facts_from_the_state_file_as_the_index_holds_them(vault: Path) -> None:
    fresh(vault).sync()
    paths = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*.md") if ".nlmsync" not in p.parts)
    memory = NoteIndex(vault, None, Settings(vault=vault))
    memory.sync()
    expected = memory.facts(paths)
    assert expected and any(fact.pages for fact in expected.values())  # notes whose copies share keys among them
    index = fresh(vault)
    assert index.facts(paths) == expected and not index.loaded


def test_a_cold_answer_reads_only_the_blocks_of_its_terms(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small_blocks(monkeypatch)
    fresh(vault).sync()
    read: list[str] = []
    real_read = SnapshotParts.read

    def traced(db: object) -> SnapshotParts:
        parts = real_read(db)  # type: ignore[arg-type]
        parts._conn.set_trace_callback(read.append)
        return parts

    monkeypatch.setattr(SnapshotParts, "read", traced)
    assert cold(vault, "heapsort") == from_scratch(vault, "heapsort")
    assert len([statement for statement in read if "FROM index_blocks" in statement]) == 1  # of more than 100


def test_an_unchanged_vault_is_compared_with_the_snapshot_at_once(vault: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Built whole, the snapshot holds the notes in the order a walk lists them: a walk of the unchanged vault is
    compared with its stored bytes, and no path of the snapshot is decoded to answer."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()  # a snapshot, and rows for the notes it skipped
    decoded: list[bytes] = []
    real_decode = index_codec._decode_paths
    monkeypatch.setattr(index_codec, "_decode_paths",
                        lambda raw: decoded.append(raw) or real_decode(raw))  # type: ignore[func-returns-value]
    assert cold(vault, "heapsort") == from_scratch(vault, "heapsort")
    assert decoded == []


def test_notes_listed_in_another_order_are_compared_path_by_path(vault: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A walk may list the notes in another order than the snapshot (a folder's entries come in the order the
    file system gives): the vault is still unchanged, and a changed stat is still a change."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    listing = list_vault(vault)
    order = list(reversed(range(len(listing.paths))))
    listing.paths[:] = [listing.paths[i] for i in order]
    listing.mtimes[:] = [listing.mtimes[i] for i in order]
    listing.sizes[:] = [listing.sizes[i] for i in order]
    with transaction(db.conn):
        parts = SnapshotParts.read(db.conn)
        rows = index_codec.load_docs(db.conn)
        assert vault_unchanged(parts, rows, listing)
        listing.mtimes[0] += 1
        assert not vault_unchanged(SnapshotParts.read(db.conn), rows, listing)


def test_a_vault_changed_only_as_the_rows_say_is_compared_in_order(vault: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes edited, deleted and added since a whole build are rows; the other notes keep the snapshot's order, so
    the walk less the rows' notes is compared with the snapshot less theirs as it is, with no path-to-slot dict."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 512)
    index = fresh(vault)
    touch(vault / "inbox.md", "A tapir in the inbox, sorting heaps.")
    (vault / "Home.md").unlink()
    (vault / "new").mkdir()
    touch(vault / "new" / "tapir.md", "# Tapir\nA tapir is not a heap.")
    for path in ("inbox.md", "Home.md", "new/tapir.md"):
        index.mark_path_modified(path)
    index.sync()  # rows: edited, deleted, added
    db = open_database(vault / ".nlmsync" / "state.db")
    with transaction(db.conn):
        parts = SnapshotParts.read(db.conn)
        assert vault_unchanged(parts, index_codec.load_docs(db.conn), list_vault(vault))
        assert "slot_of" not in parts.__dict__
    for query in ("tapir", "heapsort", "sourdough"):
        assert cold(vault, query) == from_scratch(vault, query)
    touch(vault / "inbox.md", "A tapir walked out.")  # a change no row holds
    with transaction(db.conn):
        assert not vault_unchanged(SnapshotParts.read(db.conn), index_codec.load_docs(db.conn),
                                   list_vault(vault))


def test_cold_hits_over_a_snapshot_and_rows(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes indexed, edited or deleted since the last merge are rows that hide the snapshot's entry."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()  # a snapshot
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 512)
    index = fresh(vault)
    touch(vault / "inbox.md", "A tapir in the inbox, sorting heaps.")
    (vault / "Home.md").unlink()
    (vault / "new" / "tapir.md").parent.mkdir()
    touch(vault / "new" / "tapir.md", "# Tapir\nA tapir is not a heap.")
    for path in ("inbox.md", "Home.md", "new/tapir.md"):
        index.mark_path_modified(path)
    index.sync()  # rows: edited, deleted, added
    for query in QUERIES:
        assert cold(vault, query) == from_scratch(vault, query)
    assert cold(vault, "tapir", 1)[0][0] == "new/tapir.md"


@pytest.mark.parametrize("merge_threshold", [1, 512], ids=["snapshot", "rows-only"])
@pytest.mark.parametrize("change", ["edit", "same-size edit", "add", "delete", "empty", "binary"])
def test_a_change_made_while_nothing_ran_is_never_answered_cold(vault: Path, change: str, merge_threshold: int,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", merge_threshold)
    fresh(vault).sync()
    target = vault / "inbox.md"
    if change == "edit":
        touch(target, "A tapir walked in.")
    elif change == "same-size edit":  # only the mtime tells
        size = target.stat().st_size
        touch(target, ("tapir " * size)[:size])
    elif change == "add":
        touch(vault / "tapir.md", "A tapir walked in.")
    elif change == "delete":
        target.unlink()
    elif change == "empty":
        touch(target, "")
    else:
        target.write_bytes(b"\x00\x01tapir\x00")
    index = fresh(vault)
    assert hits(index, "tapir") == from_scratch(vault, "tapir")
    assert index.loaded  # the change was read by the whole-index path, and saved
    assert cold(vault, "tapir") == from_scratch(vault, "tapir")  # the next process answers cold again


def test_skipped_notes_leave_the_vault_unchanged(vault: Path) -> None:
    """The fixture vault holds empty, binary, invalid and excluded notes: skips the cache records, which a
    cold answer checks like any note."""
    fresh(vault).sync()
    assert cold(vault, "heapsort") == from_scratch(vault, "heapsort")


@pytest.mark.parametrize("damage", ["UPDATE index_snapshot SET starts = x'00'",
                                    "UPDATE index_snapshot SET heads = CAST(upper(CAST(heads AS TEXT)) AS BLOB)",
                                    "UPDATE index_blocks SET postings = zeroblob(length(postings)) || x'ffffffff'",
                                    "UPDATE index_blocks SET terms = CAST('tapir' AS BLOB)",
                                    "UPDATE index_blocks SET postings = substr(postings, 1, length(postings) - 1)",
                                    "DELETE FROM index_blocks WHERE block = (SELECT max(block) FROM index_blocks)",
                                    "UPDATE index_docs SET terms = 'not json' WHERE path = 'inbox.md'",
                                    "UPDATE index_snapshot SET paths = CAST('inbox.md' AS BLOB)"])
def test_a_damaged_cache_is_not_answered_cold(vault: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 512)
    index = fresh(vault)
    touch(vault / "inbox.md", "A tapir in the inbox.")
    index.mark_path_modified("inbox.md")
    index.sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    db.execute(damage)
    db.conn.commit()
    index = fresh(vault)
    assert [hits(index, q) for q in QUERIES] == [from_scratch(vault, q) for q in QUERIES]
    assert index.loaded


def test_a_snapshot_without_its_blocks_is_built_again(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks are written with the snapshot: one without them is damaged, not answered cold, and the index
    built again from the vault is saved whole, so the next process is answered cold again."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    fresh(vault).sync()
    db = open_database(vault / ".nlmsync" / "state.db")
    assert db.execute("DELETE FROM index_blocks").rowcount >= 1
    db.conn.commit()
    index = fresh(vault)
    assert [hits(index, q) for q in QUERIES] == [from_scratch(vault, q) for q in QUERIES]
    assert index.loaded and index.notes_read > 0
    for query in QUERIES:
        assert cold(vault, query) == from_scratch(vault, query)


def test_a_cold_answer_then_more_queries_walk_the_vault_once(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh(vault).sync()
    expected = [from_scratch(vault, q) for q in ["heapsort", *QUERIES]]
    walks = []
    real_walk = index_module.list_vault  # type: ignore[attr-defined]

    def counting_walk(root: Path, attachments: frozenset[str] = frozenset()) -> object:
        walks.append(root)
        return real_walk(root, attachments)

    monkeypatch.setattr(index_module, "list_vault", counting_walk)
    index = fresh(vault)
    assert hits(index, "heapsort") == expected[0]
    assert not index.loaded and len(walks) == 1
    assert [hits(index, q) for q in QUERIES] == expected[1:]
    assert index.loaded and len(walks) == 1  # the first sync compared the cold answer's walk


@pytest.mark.parametrize("change", ["modified", "added", "deleted", "full rescan"])
def test_a_change_marked_after_a_cold_answer_is_searched(vault: Path, change: str) -> None:
    """The cold answer's walk was taken before the change: the first sync must not take it for the vault."""
    fresh(vault).sync()
    index = fresh(vault)
    assert hits(index, "heapsort")
    assert not index.loaded
    if change == "modified":
        touch(vault / "inbox.md", "A tapir in the inbox.")
        index.mark_path_modified("inbox.md")
    elif change == "added":
        touch(vault / "new.md", "# New\n\nA tapir.")
        index.mark_path_modified("new.md")
    elif change == "deleted":
        (vault / "inbox.md").unlink()
        index.mark_path_deleted("inbox.md")
    else:  # an edit nothing marked, then a full rescan asked for
        touch(vault / "inbox.md", "A tapir in the inbox.")
        index.mark_full_rescan_needed()
    for query in QUERIES:  # "tapir" among them
        assert hits(index, query) == from_scratch(vault, query), query
    assert ("inbox.md" in index.paths()) == (change != "deleted")


WORDS = ["heap", "sort", "heapsort", "kimchi", "김치찌개", "ヒープ", "ソート", "the", "and", "not", "mc²", "river",
         "tea", "Tea"]
PATHS = ["a.md", "b.md", "notes/c.md", "notes/deep/d.md", "노트.md", "tea/river.md"]
PROPERTY_QUERIES = ["heap sort", "heapsort", "김치", "ヒープソート", "the river", "tea river", "notes", "deep d",
                    "not kimchi"]
texts = st.lists(st.sampled_from([*WORDS, "\n# ", "\n"]), min_size=0, max_size=12).map(" ".join)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(initial=st.lists(st.tuples(st.sampled_from(PATHS), texts), min_size=1, max_size=6),
       later=st.lists(st.tuples(st.sampled_from(PATHS), st.one_of(texts, st.none())), max_size=4),
       merge_threshold=st.sampled_from([1, 2, 512]), limit=st.sampled_from([None, 1, 2]),
       block_postings=st.sampled_from([1, 4, 1 << 16]))
def test_cold_answers_equal_from_scratch(initial: list[tuple[str, str]], later: list[tuple[str, str | None]],
                                         merge_threshold: int, limit: int | None, block_postings: int,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the snapshot and rows a history of syncs left, and however its terms fall into blocks, a cold
    answer is the from-scratch answer."""
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", merge_threshold)
    monkeypatch.setattr(index_codec, "_BLOCK_POSTINGS", block_postings)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        clock = 1_700_000_000_000_000_000

        def write(rel: str, text: str | None) -> None:
            nonlocal clock
            path = root / rel
            if text is None:
                path.unlink(missing_ok=True)
                return
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            clock += 1_000_000
            os.utime(path, ns=(clock, clock))

        for rel, text in initial:
            write(rel, text)
        fresh(root).sync()
        live = fresh(root)
        for rel, text in later:
            write(rel, text)
            live.mark_path_modified(rel)
            live.sync()
        for query in PROPERTY_QUERIES:
            index = fresh(root)
            found = hits(index, query, limit)
            assert not index.loaded
            assert found == from_scratch(root, query, limit), query
