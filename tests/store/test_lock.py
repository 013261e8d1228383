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
store = StateStore.open(Path(sys.argv[1]))
with store.writer():
    if sys.argv[2] == "mid-step":
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


def test_second_writer_gets_a_clear_error_with_the_holders_pid(state_path: Path, other_writer) -> None:
    with StateStore.open(state_path) as store:
        with pytest.raises(StateLockedError) as caught, store.writer(timeout=0.2):
            pass
        assert str(caught.value) == f"another nlmsync is running on this vault (pid {other_writer.pid})"
        assert caught.value.pid == other_writer.pid


def test_readers_and_single_steps_do_not_wait_for_the_writer_lock(state_path: Path, other_writer) -> None:
    with StateStore.open(state_path) as store:
        add(store, "a.md", "s1")
        assert [m.path for m in store.all_mappings(NB)] == ["a.md", "committed.md"]


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
            assert (state_path.parent / "state.db.lock").read_text().strip() == str(os.getpid())
        with second.writer(timeout=0.1):
            pass


def test_a_killed_holder_releases_the_lock(state_path: Path, other_writer) -> None:
    other_writer.kill()
    other_writer.wait(timeout=30)
    with StateStore.open(state_path) as store, store.writer(timeout=5):
        add(store, "a.md", "s1")
