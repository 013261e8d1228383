"""Crash safety: each store step runs in a forked child killed before its Nth SQL statement, for every N.

After reopening, the file must hold the state from before the step or after it, never a mix. The
kill is `os._exit` from SQLite's statement trace hook, so every statement of the step — the COMMIT
included — is a kill point. Each kill point is its own test (`[STEP-kill@N]`; the statement counts are taken
at collection), all from one seeded base file per module.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database
from tests.store.helpers import NB, add

from nlmsync.config import Settings
from nlmsync.store import StateStore, open_database
from nlmsync.store.schema import migrations

KILLED, FINISHED, FAILED = 17, 0, 3
SETTINGS = Settings(max_conversations=3, max_aliases=6, max_query_records_per_conversation=4)
Step = Callable[[StateStore], Any]


def _fixed_clock() -> datetime:
    return datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _open(path: Path) -> StateStore:
    return StateStore(open_database(path), SETTINGS, clock=_fixed_clock)


def _seed(store: StateStore) -> None:
    add(store, "a.md", "a-v1")
    add(store, "big.md", "big-0", part=0, part_count=2)
    add(store, "big.md", "big-1", part=1, part_count=2)
    add(store, "c.md", "c-v1", managed=False)
    store.register_source_alias("a-v0", "a-v1")
    store.register_source_alias("c-v0", "c-v1")
    store.mark_used(NB, ["a.md", "big.md"])
    for i in range(3):
        store.record_turn(NB, f"conv{i}", f"q{i}", f"a{i}", [f"a-v{i}"], ["a.md"], {"1": "a-v1"})
    store.queue_deletion(NB, "stale-1", "replaced")


def _replace_step(store: StateStore) -> None:
    with store.step():
        add(store, "a.md", "a-v2")
        store.register_source_alias("a-v1", "a-v2")
        store.queue_deletion(NB, "a-v1", "replaced by a new version of a.md")
        store.mark_used(NB, ["a.md"])


def _evict_step(store: StateStore) -> None:
    with store.step():
        for m in store.get_mappings(NB, "big.md"):
            store.record_eviction(NB, "big.md", m.source_id, "capacity")
        store.remove_mappings(NB, "big.md")


def _turn_with_compaction(store: StateStore) -> None:
    store.record_turn(NB, "conv-new", "why?", "because", ["a-v1", "big-0"], ["a.md", "big.md"], {"1": "a-v1"})


def _alias_with_compaction(store: StateStore) -> None:
    with store.step():
        for i in range(6):
            add(store, f"x{i}.md", f"x{i}")
            store.register_source_alias(f"x{i}", f"y{i}")


STEPS: dict[str, Step] = {
    "replace": _replace_step,
    "evict": _evict_step,
    "reconcile": lambda s: s.reconcile(NB, {"a-v1", "big-1", "c-v1"}),
    "record_turn+compaction": _turn_with_compaction,
    "alias+compaction": _alias_with_compaction,
    "vault_rename_out": lambda s: s.apply_vault_rename("a.md", "a.txt"),
    "vault_rename": lambda s: s.apply_vault_rename("big.md", "moved/big.md"),
}


def _dump(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = sqlite3.connect(path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                             "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        columns = {"_sqlite_migrations": "migration_set, name"}  # applied_at is the wall clock
        return {t: sorted(conn.execute(f"SELECT {columns.get(t, '*')} FROM {t}").fetchall(), key=repr)
                for t in tables}
    finally:
        conn.close()


def _count_statements(path: Path, step: Step) -> int:
    store = _open(path)
    seen: list[str] = []
    store.db.conn.set_trace_callback(seen.append)
    step(store)
    store.db.conn.set_trace_callback(None)
    store.close()
    return len(seen)


def _run_killed_at(path: Path, step: Step, kill_at: int) -> int:
    """Run `step` on a store opened in a forked child that dies before its statement `kill_at`."""
    return _in_child(lambda trace: _traced_step(path, step, trace), kill_at)


def _traced_step(path: Path, step: Step, trace: Callable[[str], None]) -> None:
    store = _open(path)
    store.db.conn.set_trace_callback(trace)
    step(store)


def _in_child(work: Callable[[Callable[[str], None]], None], kill_at: int) -> int:
    with warnings.catch_warnings():
        # Python >= 3.12 warns when forking while other threads exist (idle worker threads other test
        # modules leave behind). The child only runs SQLite and store code, which needs no lock those
        # threads could hold, and it never returns to pytest.
        warnings.filterwarnings("ignore", message=r".*use of fork\(\) may lead to deadlocks",
                                category=DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        try:
            count = 0

            def trace(_statement: str) -> None:
                nonlocal count
                count += 1
                if count == kill_at:
                    os._exit(KILLED)

            work(trace)
            os._exit(FINISHED)
        finally:
            os._exit(FAILED)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _seeded_base(path: Path) -> None:
    with _open(path) as store:
        _seed(store)


def _statement_counts() -> dict[str, int]:
    """How many SQL statements each step runs on the seeded base: its kill points, known at collection."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base.db"
        _seeded_base(base)
        counts = {}
        for name, step in STEPS.items():
            trial = Path(tmp) / f"{name}.db"
            shutil.copy(base, trial)
            counts[name] = _count_statements(trial, step)
        return counts


STATEMENTS = _statement_counts()
# Statement 1 and the last (the COMMIT) of every step run in the fast loop; all of them are `slow`.
KILL_POINTS = [pytest.param(name, kill_at, id=f"{name}-kill@{kill_at}",
                            marks=() if kill_at in (1, total) else pytest.mark.slow)
               for name, total in STATEMENTS.items() for kill_at in range(1, total + 1)]


@dataclass
class Seeded:
    """The seeded base file, its contents, and each step's statement count and contents once run to the end."""

    base: Path
    before: dict[str, list[tuple[Any, ...]]]
    totals: dict[str, int]
    after: dict[str, dict[str, list[tuple[Any, ...]]]]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Seeded:
    root = tmp_path_factory.mktemp("crash")
    base = root / "base.db"
    _seeded_base(base)
    totals, after = {}, {}
    for name, step in STEPS.items():
        finished = root / f"{name}-finished.db"
        shutil.copy(base, finished)
        totals[name] = _count_statements(finished, step)
        after[name] = _dump(finished)
    return Seeded(base, _dump(base), totals, after)


@pytest.mark.parametrize(("name", "kill_at"), KILL_POINTS)
def test_a_step_killed_at_any_statement_leaves_before_or_after(seeded: Seeded, tmp_path: Path, name: str,
                                                               kill_at: int) -> None:
    total = seeded.totals[name]
    assert total == STATEMENTS[name], f"{name}: {total} statements now, {STATEMENTS[name]} at collection"
    trial = tmp_path / "trial.db"
    shutil.copy(seeded.base, trial)
    assert _run_killed_at(trial, STEPS[name], kill_at) == KILLED
    state = _dump(trial)
    assert state in (seeded.before, seeded.after[name]), \
        f"{name}: killed before statement {kill_at} of {total}: a mixed state"
    if kill_at == 1:
        assert state == seeded.before
    with _open(trial) as reopened:
        reopened.compact()


@pytest.mark.parametrize("name", list(STEPS))
def test_a_step_run_to_its_end_leaves_after(seeded: Seeded, tmp_path: Path, name: str) -> None:
    assert seeded.after[name] != seeded.before, "the step must change something"
    trial = tmp_path / "trial.db"
    shutil.copy(seeded.base, trial)
    assert _run_killed_at(trial, STEPS[name], seeded.totals[name] + 1) == FINISHED
    assert _dump(trial) == seeded.after[name]


def _traced_open(path: Path, trace: Callable[[str], None]) -> None:
    """`open_database` with every connection it makes traced (the check's and the migrating one)."""
    real_connect = sqlite3.connect

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(trace)
        return conn

    sqlite3.connect = connect  # type: ignore[assignment]  # in a forked child only
    open_database(path).close()


def _old_schema(path: Path) -> None:
    """A state file written before `0002_state`."""
    old = Database(sqlite3.connect(path))
    old.enable_wal()
    migrations.apply(old, stop_before="0002_state")
    old.close()


def _upgrade_statements() -> list[str]:
    """The SQL statements `open_database` runs to upgrade an old file (every connection it makes)."""
    statements: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        old = Path(tmp) / "old.db"
        _old_schema(old)
        real_connect = sqlite3.connect

        def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
            conn = real_connect(*args, **kwargs)
            conn.set_trace_callback(statements.append)
            return conn

        patch.setattr(sqlite3, "connect", connect)
        open_database(old).close()
    return statements


UPGRADE_STATEMENTS = len(_upgrade_statements())


@dataclass
class Upgrade:
    """An old-schema file, its contents, and its contents once upgraded."""

    base: Path
    before: dict[str, list[tuple[Any, ...]]]
    after: dict[str, list[tuple[Any, ...]]]


@pytest.fixture(scope="module")
def upgrade(tmp_path_factory: pytest.TempPathFactory) -> Upgrade:
    root = tmp_path_factory.mktemp("upgrade")
    base = root / "old.db"
    _old_schema(base)
    finished = root / "finished.db"
    shutil.copy(base, finished)
    assert _in_child(lambda trace: _traced_open(finished, trace), 10**9) == FINISHED
    return Upgrade(base, _dump(base), _dump(finished))


def test_an_upgrade_runs_in_one_immediate_transaction_to_the_new_schema(upgrade: Upgrade) -> None:
    assert upgrade.after != upgrade.before and "source_mappings" in upgrade.after
    assert any(s.startswith("BEGIN IMMEDIATE") for s in _upgrade_statements())


# Statement 1 and the last run in the fast loop; all of them are `slow`.
@pytest.mark.parametrize("kill_at", [
    pytest.param(n, id=f"kill@{n}", marks=() if n in (1, UPGRADE_STATEMENTS) else pytest.mark.slow)
    for n in range(1, UPGRADE_STATEMENTS + 1)])
def test_an_upgrade_killed_at_any_statement_leaves_the_old_or_the_new_schema(upgrade: Upgrade, tmp_path: Path,
                                                                            kill_at: int) -> None:
    trial = tmp_path / "trial.db"
    shutil.copy(upgrade.base, trial)
    assert _in_child(lambda trace: _traced_open(trial, trace), kill_at) == KILLED
    assert _dump(trial) in (upgrade.before, upgrade.after), f"upgrade killed before statement {kill_at}: a mixed schema"
    with StateStore.open(trial) as reopened:
        assert reopened.all_mappings(NB) == []
    assert _dump(trial) == upgrade.after
