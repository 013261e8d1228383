"""The cross-process writer lock: one writer per vault, a clear message naming the holder's pid."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.store.helpers import NB, add

from nlmsync.errors import StateLockedError
from nlmsync.store import StateStore

HOLDER = """
import sys
from pathlib import Path
from nlmsync.store import StateStore
state, mode = sys.argv[1:3]
sys.argv = ["nlmsync", "--server", "fake --latency 2", "refresh", "--all"]  # what the lock records
store = StateStore.open(Path(state))
with store.writer():
    if mode == "mid-step":
        with store.step():
            store.upsert_mapping(notebook_id="nb-1", path="uncommitted.md", source_id="s-u", content_hash="h",
                                 title="uncommitted.md")
            print("locked", flush=True)
            sys.stdin.readline()
    else:
        print("locked", flush=True)
        sys.stdin.readline()
"""


def _hold(state_path: Path, mode: str) -> Iterator[subprocess.Popen[str]]:
    with StateStore.open(state_path) as store:
        add(store, "committed.md", "s-c")
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(state_path), mode], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)
    proc.stdout.close()


@pytest.fixture
def other_writer(state_path: Path) -> Iterator[subprocess.Popen[str]]:
    yield from _hold(state_path, "idle")


@pytest.fixture
def writer_mid_step(state_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding the writer lock and an open (uncommitted) write transaction."""
    yield from _hold(state_path, "mid-step")


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_second_writer_gets_a_clear_error_with_the_holders_pid_and_command(state_path: Path, other_writer) -> None:
    with StateStore.open(state_path) as store:
        with pytest.raises(StateLockedError) as caught, store.writer(timeout=0.2):
            pass
        assert str(caught.value) == (f"another nlmsync is running on this vault "
                                     f"(pid {other_writer.pid}: nlmsync --server 'fake --latency 2' refresh --all)")
        assert caught.value.pid == other_writer.pid and caught.value.exit_code == 7


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_readers_and_single_steps_do_not_wait_for_the_writer_lock(state_path: Path, other_writer) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
        assert [m.path for m in store.all_mappings(NB)] == ["a.md", "committed.md"]


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_a_reader_opens_and_reads_while_another_process_is_inside_a_write_step(
        state_path: Path, writer_mid_step) -> None:
    with StateStore.open(state_path) as reader:
        assert [m.path for m in reader.all_mappings(NB)] == ["committed.md"]
        assert reader.next_eviction_candidate(NB) == "committed.md"
        assert reader.resolve_source_id("s-c") == "s-c"


def test_lock_is_reentrant_and_released(state_path: Path) -> None:
    with StateStore.open(state_path) as first, StateStore.open(state_path) as second:
        with first.writer(timeout=0.1):
            with first.writer(timeout=0.1):
                pass
            assert (state_path.parent / "state.db.lock").read_text().splitlines()[0] == str(os.getpid())
        with second.writer(timeout=0.1):
            pass


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_a_killed_holder_releases_the_lock(state_path: Path, other_writer) -> None:
    with StateStore.open(state_path) as store:
        with pytest.raises(StateLockedError), store.writer(timeout=0.1):
            pass
        other_writer.kill()
        other_writer.wait(timeout=30)
        with store.writer(timeout=5):
            add(store, "a.md", "s1")
            assert (state_path.parent / "state.db.lock").read_text().splitlines()[0] == str(os.getpid())
        assert [m.source_id for m in store.mappings_by_path(NB, "a.md")] == ["s1"]


SQLITE_HOLDER = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN EXCLUSIVE")
conn.execute("INSERT INTO meta (key, value) VALUES ('held', '1') ON CONFLICT (key) DO UPDATE SET value = '2'")
print("locked", flush=True)
sys.stdin.readline()
"""


def test_a_state_file_another_process_keeps_locked_is_busy_naming_the_process(
        state_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Not another nlmsync (no writer lock): a program holding SQLite's own lock. nlmsync waits the busy
    timeout (shortened here), then stops as busy — exit 7 — naming the holder when the system can tell."""
    monkeypatch.setattr("nlmsync.store.db.BUSY_TIMEOUT_SECONDS", 0.2)
    with StateStore.open(state_path) as store:
        add(store, "committed.md", "s-c")
    with subprocess.Popen([sys.executable, "-c", SQLITE_HOLDER, str(state_path)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        try:
            with StateStore.open(state_path) as store, pytest.raises(StateLockedError) as caught:
                add(store, "a.md", "s1")
        finally:
            assert holder.stdin is not None
            holder.stdin.close()
            holder.wait(timeout=30)
    message = str(caught.value)
    assert message.startswith(f"{state_path}: state file is locked by another process (")
    assert "gave up after 0.2 s" in message and caught.value.exit_code == 7
    if Path("/proc/locks").exists():
        assert f"(pid {holder.pid}: " in message and "import sqlite3" in message


def test_a_writer_waiting_in_vain_names_the_holders_pid_and_command(state_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The same as across processes, in one: the lock file records the holder's pid and command line."""
    monkeypatch.setattr(sys, "argv", ["/usr/bin/nlmsync", "refresh", "caf\u00e9 notes/"])
    with StateStore.open(state_path) as holder, StateStore.open(state_path) as waiter, holder.writer():
        with pytest.raises(StateLockedError) as caught, waiter.writer(timeout=0.05):
            pass
    assert str(caught.value) == ("another nlmsync is running on this vault "
                                 f"(pid {os.getpid()}: nlmsync refresh 'caf\u00e9 notes/')")
