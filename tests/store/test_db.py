"""Opening the state file: WAL, one migration history, refusal of corrupt and newer files (untouched)."""

from __future__ import annotations

import hashlib
import shlex
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.store.helpers import NB, add

from nlmsync.errors import EXIT_USAGE, StateCorruptError, StateError, StateTooNewError, exit_code_for
from nlmsync.store import StateStore, open_database
from nlmsync.store.db import check_integrity, open_connection, stopped_uncleanly
from nlmsync.store.schema import MIGRATION_NAMES, MIGRATION_SET, MIGRATIONS_TABLE


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _siblings(path: Path) -> set[str]:
    return {p.name for p in path.parent.iterdir()}


def test_new_file_gets_wal_and_the_whole_migration_history(state_path: Path) -> None:
    db = open_database(state_path)
    assert db.journal_mode == "wal"
    applied = [r[0] for r in db.execute("SELECT name FROM _sqlite_migrations WHERE migration_set = ? "
                                        "ORDER BY id", [MIGRATION_SET])]
    assert applied == list(MIGRATION_NAMES)
    assert applied[0] == "0001_index_cache"
    assert {"index_docs", "source_mappings", "source_aliases", "query_records"} <= set(db.table_names())
    db.close()
    again = open_database(state_path)
    assert again.execute("SELECT count(*) FROM _sqlite_migrations").fetchone()[0] == len(applied)
    again.close()


def test_an_empty_file_is_initialised(state_path: Path) -> None:
    state_path.parent.mkdir(parents=True)
    state_path.write_bytes(b"")
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
        assert len(store.all_mappings(NB)) == 1


@pytest.mark.parametrize("content", [b"this is not a database\n" * 40, b"\x00" * 4096,
                                     b"SQLite format 3\x00" + b"\xff" * 2000])
def test_non_sqlite_or_damaged_file_is_refused_untouched(state_path: Path, content: bytes) -> None:
    state_path.parent.mkdir(parents=True)
    state_path.write_bytes(content)
    before, files = _digest(state_path), _siblings(state_path)
    with pytest.raises(StateCorruptError) as caught:
        StateStore.open(state_path)
    assert str(state_path) in str(caught.value)
    assert caught.value.hint is not None and "mv" in caught.value.hint
    assert exit_code_for(caught.value) == EXIT_USAGE
    assert _digest(state_path) == before
    assert _siblings(state_path) == files


def test_truncated_database_is_refused_untouched(state_path: Path) -> None:
    with StateStore.open(state_path) as store, store.step():
        for i in range(300):
            add(store, f"notes/{i:04d}-{'x' * 100}.md", f"s{i}")
    data = state_path.read_bytes()
    state_path.write_bytes(data[: len(data) // 2])
    before = _digest(state_path)
    with pytest.raises(StateCorruptError):
        StateStore.open(state_path)
    assert _digest(state_path) == before


def test_a_directory_in_place_of_the_file_is_refused(state_path: Path) -> None:
    state_path.mkdir(parents=True)
    with pytest.raises(StateCorruptError):
        StateStore.open(state_path)


def test_file_from_a_newer_nlmsync_is_refused_byte_identical(state_path: Path) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
    conn = sqlite3.connect(state_path)
    conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, 'later')",
                 [MIGRATION_SET, "0099_from_the_future"])
    conn.commit()
    conn.close()
    before, files = _digest(state_path), _siblings(state_path)
    with pytest.raises(StateTooNewError) as caught:
        StateStore.open(state_path)
    assert "0099_from_the_future" in str(caught.value) and str(state_path) in str(caught.value)
    assert caught.value.hint == "upgrade nlmsync, or point --state at another file"  # never to move the file aside
    assert exit_code_for(caught.value) == EXIT_USAGE
    assert _digest(state_path) == before
    assert _siblings(state_path) == files


def test_other_migration_sets_in_the_file_are_ignored(state_path: Path) -> None:
    with StateStore.open(state_path):
        pass
    conn = sqlite3.connect(state_path)
    conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('plugin', 'x', 'now')")
    conn.commit()
    conn.close()
    with StateStore.open(state_path) as store:
        assert store.all_mappings(NB) == []


def test_one_store_is_safe_to_share_between_threads(store: StateStore) -> None:
    errors: list[Exception] = []

    def work(worker: int) -> None:
        try:
            for i in range(40):
                add(store, f"w{worker}/{i}.md", f"s-{worker}-{i}")
                store.mark_used(NB, [f"w{worker}/{i}.md"])
                store.resolve_source_id(f"s-{worker}-{i}")
        except Exception as exc:  # noqa: BLE001 - asserted on in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.all_mappings(NB)) == 160


def test_a_newer_step_still_in_the_wal_is_seen(state_path: Path) -> None:
    with StateStore.open(state_path):
        pass
    writer = sqlite3.connect(state_path)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, 'later')",
                   [MIGRATION_SET, "0099_in_the_wal"])
    writer.commit()
    try:
        assert Path(f"{state_path}-wal").stat().st_size > 0
        with pytest.raises(StateTooNewError, match="0099_in_the_wal"):
            StateStore.open(state_path)
    finally:
        writer.close()


def _command_in(hint: str) -> list[str]:
    return shlex.split(hint[hint.index("(") + 1: hint.rindex(")")])


def test_the_move_aside_hint_is_a_shell_command_even_for_an_awkward_path(tmp_path: Path) -> None:
    state_path = tmp_path / "it's my vault" / ".nlmsync" / "state.db"
    state_path.parent.mkdir(parents=True)
    state_path.write_bytes(b"not a database at all\n" * 10)
    with pytest.raises(StateCorruptError) as caught:
        StateStore.open(state_path)
    assert caught.value.hint is not None
    assert _command_in(caught.value.hint) == ["mv", str(state_path), f"{state_path}.broken"]


def test_damage_found_after_opening_is_a_state_error_with_the_hint(state_path: Path) -> None:
    with StateStore.open(state_path) as store, store.step():
        for i in range(300):
            add(store, f"notes/{i:04d}-{'x' * 100}.md", f"s{i}")
    with StateStore.open(state_path) as store:
        data = bytearray(state_path.read_bytes())
        page = 4096
        pages = len(data) // page
        for n in range(pages // 2, pages):  # the registry's leaf pages, not the schema on page 1
            data[n * page: n * page + 16] = b"\xff" * 16
        state_path.write_bytes(bytes(data))
        with pytest.raises(StateCorruptError) as caught:
            store.all_mappings(NB)
    assert str(state_path) in str(caught.value)
    assert exit_code_for(caught.value) == EXIT_USAGE
    assert caught.value.hint is not None
    assert _command_in(caught.value.hint) == ["mv", str(state_path), f"{state_path}.broken"]


def test_a_healthy_file_rewritten_by_a_writer_during_the_check_is_not_called_damaged(
        state_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with StateStore.open(state_path) as store, store.step():
        for i in range(400):
            add(store, f"notes/{i:04d}-{'x' * 200}.md", f"s{i}")
    assert not Path(f"{state_path}-wal").exists()  # so the check reads without locks
    real_connect = sqlite3.connect
    interleaved: list[str] = []

    def another_writer_runs(statement: str) -> None:
        # Another nlmsync opens the file and rewrites its pages while the check is reading it.
        if "quick_check" in statement and not interleaved:
            interleaved.append(statement)
            writer = real_connect(state_path)
            writer.execute("DELETE FROM source_mappings WHERE rowid % 2 = 0")
            writer.commit()
            writer.execute("VACUUM")
            writer.close()

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)  # type: ignore[call-overload]
        conn.set_trace_callback(another_writer_runs)
        return conn

    monkeypatch.setattr(sqlite3, "connect", connect)
    check_integrity(state_path)
    assert interleaved
    with StateStore.open(state_path) as store:
        assert len(store.all_mappings(NB)) == 200


def _registry_of(state_path: Path, rows: int = 300) -> None:
    with StateStore.open(state_path) as store, store.step():
        for i in range(rows):
            add(store, f"notes/{i:04d}-{'x' * 100}.md", f"s{i}")


def _damage_second_half(state_path: Path) -> None:
    """Overwrite the start of every page in the file's second half: the registry's leaf pages."""
    data = bytearray(state_path.read_bytes())
    page = 4096
    pages = len(data) // page
    for n in range(pages // 2, pages):
        data[n * page: n * page + 16] = b"\xff" * 16
    state_path.write_bytes(bytes(data))


def _statements_of_opening(state_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    statements: list[str] = []
    real_connect = sqlite3.connect

    def connect(*args: object, **kwargs: object) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)  # type: ignore[call-overload]
        conn.set_trace_callback(statements.append)
        return conn

    with monkeypatch.context() as patch:
        patch.setattr(sqlite3, "connect", connect)
        StateStore.open(state_path).close()
    return statements


def test_an_open_after_a_clean_stop_reads_the_schema_not_every_page(state_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _registry_of(state_path)
    assert not Path(f"{state_path}-wal").exists()
    assert not any("quick_check" in statement for statement in _statements_of_opening(state_path, monkeypatch))


def _stop_uncleanly(state_path: Path) -> None:
    """A process that writes to the state file and dies before closing it (as kill -9 would)."""
    script = ("import os, sqlite3, sys\n"
              "conn = sqlite3.connect(sys.argv[1])\n"
              "conn.execute('PRAGMA wal_autocheckpoint = 0')\n"
              "conn.execute(\"INSERT OR REPLACE INTO meta (key, value) VALUES ('crash', 'yes')\")\n"
              "conn.commit()\n"
              "os._exit(0)\n")
    subprocess.run([sys.executable, "-c", script, str(state_path)], check=True)
    assert Path(f"{state_path}-wal").stat().st_size > 0


def test_after_an_unclean_stop_every_page_is_read_and_a_damaged_file_refused_untouched(state_path: Path) -> None:
    _registry_of(state_path)
    _stop_uncleanly(state_path)
    assert stopped_uncleanly(state_path)
    _damage_second_half(state_path)
    before = _digest(state_path)
    with pytest.raises(StateCorruptError) as caught:
        StateStore.open(state_path)
    assert exit_code_for(caught.value) == EXIT_USAGE
    assert _digest(state_path) == before


def test_a_file_another_process_holds_open_did_not_stop_uncleanly(state_path: Path) -> None:
    _registry_of(state_path)
    holder = sqlite3.connect(state_path)
    try:
        holder.execute("PRAGMA wal_autocheckpoint = 0")
        holder.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('open', 'yes')")
        holder.commit()
        assert Path(f"{state_path}-wal").exists()
        assert not stopped_uncleanly(state_path)
    finally:
        holder.close()
    assert not Path(f"{state_path}-wal").exists()
    assert not stopped_uncleanly(state_path)


def test_an_unclean_stop_is_checked_once_then_the_file_is_closed_cleanly(state_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _registry_of(state_path)
    _stop_uncleanly(state_path)
    assert any("quick_check" in statement for statement in _statements_of_opening(state_path, monkeypatch))
    assert not stopped_uncleanly(state_path)
    assert not any("quick_check" in statement for statement in _statements_of_opening(state_path, monkeypatch))
    with StateStore.open(state_path) as store:
        assert len(store.all_mappings(NB)) == 300


def test_a_damaged_file_is_refused_before_a_schema_upgrade_writes_to_it(state_path: Path) -> None:
    _registry_of(state_path)
    conn = sqlite3.connect(state_path)
    last = MIGRATION_NAMES[-1]
    conn.execute(f"DELETE FROM {MIGRATIONS_TABLE} WHERE name = ?", [last])  # a file of the nlmsync before
    conn.commit()
    conn.close()
    _damage_second_half(state_path)
    before = _digest(state_path)
    with pytest.raises(StateCorruptError):
        StateStore.open(state_path)
    assert _digest(state_path) == before


def test_check_integrity_reads_every_page(state_path: Path) -> None:
    _registry_of(state_path)
    check_integrity(state_path)
    _damage_second_half(state_path)
    before = _digest(state_path)
    with pytest.raises(StateCorruptError) as caught:
        check_integrity(state_path)
    assert caught.value.hint is not None and "mv" in caught.value.hint
    assert _digest(state_path) == before


def test_another_programs_sqlite_database_is_refused_untouched(state_path: Path) -> None:
    state_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(state_path)
    conn.execute("CREATE TABLE bookmarks (url TEXT, title TEXT)")
    conn.execute("INSERT INTO bookmarks VALUES ('https://example.org', 'x')")
    conn.commit()
    conn.close()
    before, files = _digest(state_path), _siblings(state_path)
    with pytest.raises(StateError) as caught:
        StateStore.open(state_path)
    assert str(state_path) in str(caught.value) and "not an nlmsync state file" in str(caught.value)
    assert exit_code_for(caught.value) == EXIT_USAGE
    assert _digest(state_path) == before
    assert _siblings(state_path) == files


def test_an_empty_sqlite_database_becomes_a_state_file(state_path: Path) -> None:
    state_path.parent.mkdir(parents=True)
    conn = sqlite3.connect(state_path)
    conn.execute("PRAGMA user_version = 7")  # writes a header and an empty schema
    conn.close()
    assert state_path.read_bytes().startswith(b"SQLite format 3\x00")
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
        assert [m.path for m in store.all_mappings(NB)] == ["a.md"]


def test_open_connection_is_open_database_without_sqlite_utils(state_path: Path) -> None:
    conn = open_connection(state_path)
    assert isinstance(conn, sqlite3.Connection)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    applied = [r[0] for r in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ? ORDER BY id",
                                          [MIGRATION_SET])]
    assert applied == list(MIGRATION_NAMES)
    conn.close()
    again = open_connection(state_path)  # up to date: no step applied twice
    assert again.execute(f"SELECT count(*) FROM {MIGRATIONS_TABLE}").fetchone()[0] == len(applied)
    again.close()


def test_open_connection_refuses_a_newer_file_untouched(state_path: Path) -> None:
    open_database(state_path).close()
    conn = sqlite3.connect(state_path)
    conn.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES (?, ?, 'later')",
                 [MIGRATION_SET, "9999_future"])
    conn.commit()
    conn.close()
    before = _digest(state_path)
    with pytest.raises(StateTooNewError):
        open_connection(state_path)
    assert _digest(state_path) == before


def test_the_migration_history_is_the_one_sqlite_utils_applies() -> None:
    from sqlite_utils.migrations import Migrations

    from nlmsync.store.schema import migrations

    assert MIGRATIONS_TABLE == Migrations.migrations_table == migrations.migrations_table
    assert [m.name for m in migrations._migrations] == list(MIGRATION_NAMES)
