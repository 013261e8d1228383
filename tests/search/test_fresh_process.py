"""What a fresh process answering one search loads: no pydantic, no sqlite-utils (the time to a first
result), and the same answers as with `Settings`."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nlmsync.config import IndexSettings, Settings
from nlmsync.search import cache_read
from nlmsync.search import index as index_module
from nlmsync.search.index import NoteIndex
from nlmsync.store import index_codec
from nlmsync.store.db import migrate, open_connection, open_database


def test_index_settings_defaults_are_the_settings_defaults() -> None:
    for item in dataclasses.fields(IndexSettings):
        assert item.name in Settings.model_fields
        ours = item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
        assert ours == Settings.model_fields[item.name].get_default(call_default_factory=True), item.name


def _fresh_process(vault: Path, state: Path, body: str) -> str:
    """What a new Python process prints running `body` with `index`, a NoteIndex of `vault` on a plain
    connection to `state` (it must exit 0)."""
    code = ("import sys\nfrom pathlib import Path\n"
            "from nlmsync.search.index import NoteIndex\nfrom nlmsync.store.db import open_connection\n"
            f"index = NoteIndex(Path({str(vault)!r}), open_connection(Path({str(state)!r})))\n" + body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_the_search_path_imports_neither_pydantic_nor_sqlite_utils(vault: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    open_database(state).close()  # an existing, migrated state file: the case of every search but the first
    assert _fresh_process(vault, state, (
        "assert index.search('heapsort'), 'no hit'\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'sqlite_utils', 'click', 'typer'}))\n"
    )) == "[]"


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_an_unchanged_vault_is_searched_without_the_note_reading_modules(vault: Path, tmp_path: Path) -> None:
    """A new process whose vault did not change reads no note: neither the markdown parser nor, for an
    ASCII query, the `regex` engine (the vault has Korean and Japanese notes) is imported."""
    state = tmp_path / "state.db"
    NoteIndex(vault, open_connection(state)).sync()  # the cache a previous process left
    assert _fresh_process(vault, state, (
        "assert index.search('How does heapsort work?'), 'no hit'\n"
        "assert index.notes_read == 0, index.notes_read\n"
        "print(sorted(m for m in sys.modules if m in {'regex', 'nlmsync.search.markdown'}))\n"
        "assert index.search('김치찌개'), 'no hit for a Korean query'\n"
    )) == "[]"


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_an_unchanged_vault_is_answered_cold_without_numpy(vault: Path, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh process's first query on an unchanged vault reads the query terms' postings from the state file
    (`search.cold`): numpy, the postings and the ranking modules are never imported, with a snapshot
    (a vault past the merge threshold) as with rows only (a small one), and the answer is the loaded index's."""
    for threshold, state in ((1, tmp_path / "snapshot.db"), (512, tmp_path / "rows.db")):
        monkeypatch.setattr(index_module, "MERGE_THRESHOLD", threshold)
        NoteIndex(vault, open_connection(state)).sync()
        expected = [(h.path, h.score) for h in NoteIndex(vault, None).search("How does heapsort work?")]
        answer, imported = _fresh_process(vault, state, (
            "hits = index.search('How does heapsort work?')\n"
            "assert not index.loaded, 'loaded'\n"
            "print(repr([(h.path, h.score) for h in hits]))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'numpy' and '.' not in m\n"
            "             or m in {'nlmsync.search.postings', 'nlmsync.search.ranking'}))\n"
        )).splitlines()
        assert answer == repr(expected)
        assert imported == "[]"


def test_a_plain_connection_and_default_settings_answer_like_settings_and_sqlite_utils(vault: Path) -> None:
    state = vault / ".nlmsync" / "state.db"
    queries = ["How does heapsort work?", "김치찌개", "sourdough"]
    with_settings = NoteIndex(vault, open_database(state), Settings(vault=vault))
    expected = [[(h.path, h.score) for h in with_settings.search(q)] for q in queries]
    plain = NoteIndex(vault, open_connection(state))
    assert [[(h.path, h.score) for h in plain.search(q)] for q in queries] == expected
    assert plain.notes_read == 0
    assert [h.path for h in plain.selected("heapsort")] == [h.path for h in with_settings.selected("heapsort")]


def _snapshot_parts(snapshot: index_codec.Snapshot | None) -> tuple[object, ...]:
    assert snapshot is not None
    return (snapshot.paths, list(snapshot.terms), snapshot.mtimes.tolist(), snapshot.sizes.tolist(),
            snapshot.lengths.tolist(), snapshot.offsets.tolist(), snapshot.slots.tolist(),
            snapshot.tf_values[snapshot.tf_codes].tolist())


def _state_with_snapshot_and_rows(vault: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)  # every sync merges: a snapshot, then rows
    state = vault / ".nlmsync" / "state.db"
    NoteIndex(vault, open_database(state)).sync()
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 512)
    index = NoteIndex(vault, open_database(state))
    (vault / "inbox.md").write_text("A tapir in the inbox.", encoding="utf-8")
    index.mark_path_modified("inbox.md")
    index.sync()
    return state


def test_the_cache_read_in_the_background_is_the_cache(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state_with_snapshot_and_rows(vault, monkeypatch)
    conn = open_connection(state)
    rows, snapshot, facts = cache_read.start_read(conn).result()  # a thread, on a connection of its own
    assert rows == index_codec.load_docs(conn) and any(row.path == "inbox.md" for row in rows)
    assert facts == index_codec.load_facts(conn) and facts[index_codec.path_key("inbox.md")].lang == "en"
    assert _snapshot_parts(snapshot) == _snapshot_parts(cache_read.load_snapshot(conn))


def test_the_cache_is_read_on_the_callers_connection_inside_its_transaction(vault: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state_with_snapshot_and_rows(vault, monkeypatch)
    conn = open_connection(state)
    conn.execute("BEGIN")
    conn.execute("DELETE FROM index_docs")  # not committed: only this connection sees it
    rows, snapshot, _facts = cache_read.start_read(conn).result()
    assert rows == [] and snapshot is not None
    conn.rollback()


def test_a_cache_the_background_cannot_read_is_read_on_the_callers_connection(
        vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    state = _state_with_snapshot_and_rows(vault, monkeypatch)
    conn = open_connection(state)
    expected = (index_codec.load_docs(conn), _snapshot_parts(cache_read.load_snapshot(conn)))

    def refuse(*args: object, **kwargs: object) -> sqlite3.Connection:
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr("nlmsync.search.cache_read.sqlite3.connect", refuse)
    rows, snapshot, _facts = cache_read.start_read(conn).result()
    assert (rows, _snapshot_parts(snapshot)) == expected


def test_an_index_in_memory_reads_at_once(vault: Path) -> None:
    from sqlite_utils import Database

    db = Database(sqlite3.connect(":memory:"))
    migrate(db)
    assert cache_read.start_read(db.conn).result() == ([], None, {})


def _bump(path: Path, *, mtime: bool = True) -> None:
    st = path.stat()
    later = st.st_mtime_ns + 10_000_000 if mtime else st.st_mtime_ns
    os.utime(path, ns=(later, later))


def _write_keeping(path: Path, text: str, *, keep_mtime: bool) -> None:
    st = path.stat()
    path.write_text(text, encoding="utf-8")
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    else:
        _bump(path)


CHANGES_WHILE_NOTHING_RAN = {
    "modified, same size": lambda v: _write_keeping(v / "inbox.md", "A tapir! " + (v / "inbox.md").read_text()[9:],
                                                    keep_mtime=False),
    "modified, same mtime": lambda v: _write_keeping(v / "inbox.md", "A tapir in the inbox, longer than before.",
                                                     keep_mtime=True),
    "new note": lambda v: (v / "notes" / "tapir.md").parent.mkdir() or (v / "notes" / "tapir.md").write_text("tapir"),
    "deleted note": lambda v: (v / "cooking" / "shakshuka.md").unlink(),
    "renamed note": lambda v: (v / "cooking" / "sourdough.md").rename(v / "cooking" / "tapir-bread.md"),
    "renamed folder": lambda v: (v / "cooking").rename(v / "kitchen"),
    "note became empty": lambda v: _write_keeping(v / "inbox.md", "", keep_mtime=False),
    "note became binary": lambda v: (v / "inbox.md").write_bytes(b"\x00\x01tapir"),
    "moved into the trash": lambda v: (v / ".trash").mkdir() or (v / "cooking").rename(v / ".trash" / "cooking"),
    "link to a folder": lambda v: (v / "linked").symlink_to(v / "cooking"),
    "link to outside": lambda v: (v / "outside.md").symlink_to(v.parent / "elsewhere.md"),
}


@pytest.mark.parametrize("change", sorted(CHANGES_WHILE_NOTHING_RAN))
def test_a_new_process_finds_what_changed_while_nothing_ran(vault: Path, change: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """With a snapshot in the cache (the arrays the first rescan compares with), every kind of change is
    found and the answers are those of an index built from scratch."""
    (vault.parent / "elsewhere.md").write_text("tapir from outside")
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)  # the build is written as a snapshot
    state = vault / ".nlmsync" / "state.db"
    NoteIndex(vault, open_connection(state)).sync()
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 512)
    assert cache_read.load_snapshot(open_connection(state)) is not None
    CHANGES_WHILE_NOTHING_RAN[change](vault)
    index = NoteIndex(vault, open_connection(state))
    queries = ["tapir", "sourdough bread", "kimchi", "heapsort"]
    got = [[(h.path, h.score, h.matched_terms) for h in index.search(q)] for q in queries]
    scratch = NoteIndex(vault, None)
    assert got == [[(h.path, h.score, h.matched_terms) for h in scratch.search(q)] for q in queries]
    assert index.paths() == scratch.paths()
    assert index.skipped() == scratch.skipped()
    assert index.notes_read <= 4  # the notes that changed (a renamed folder: its 4), not the vault's 30
    again = NoteIndex(vault, open_connection(state))  # and what it wrote back is right too
    assert [[(h.path, h.score, h.matched_terms) for h in again.search(q)] for q in queries] == got
    assert again.notes_read == 0


def test_a_note_added_to_a_vault_whose_snapshot_is_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for name in ("a.md", "b.md"):
        (vault / name).write_text("heap")
    monkeypatch.setattr(index_module, "MERGE_THRESHOLD", 1)
    state = tmp_path / "state.db"
    index = NoteIndex(vault, open_connection(state))
    index.sync()
    for name in ("a.md", "b.md"):
        (vault / name).unlink()
        index.mark_path_deleted(name)
    index.sync()  # both dead: merged into a snapshot of no notes
    snapshot = cache_read.load_snapshot(open_connection(state))
    assert snapshot is not None and snapshot.paths == []
    (vault / "c.md").write_text("heap sort")
    assert [h.path for h in NoteIndex(vault, open_connection(state)).search("heap")] == ["c.md"]
