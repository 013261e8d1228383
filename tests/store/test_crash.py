"""Crash safety: each store step runs in a child process killed before its Nth SQL statement, for every N.

After reopening, the file must hold the state from before the step or after it, never a mix. The
kill is `os._exit` from SQLite's statement trace hook, so every statement of the step — the COMMIT
included — is a kill point. Each kill point is its own test (`[STEP-kill@N]`; the statement counts are taken
at collection), all from one seeded base file per module.
"""

from __future__ import annotations

import multiprocessing
import shutil
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database
from tests.store.crash_steps import (
    FINISHED,
    KILLED,
    STEPS,
    UPGRADE,
    Step,
    die_before_statement,
    open_at,
    seed,
)
from tests.store.helpers import NB

from nlmsync.store import StateStore, open_database
from nlmsync.store.schema import migrations


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
    store = open_at(path)
    seen: list[str] = []
    store.db.conn.set_trace_callback(seen.append)
    step(store)
    store.db.conn.set_trace_callback(None)
    store.close()
    return len(seen)


# Children are forked by a forkserver, a single-threaded process that has imported `crash_steps` once.
_CHILDREN = multiprocessing.get_context("forkserver")
_CHILDREN.set_forkserver_preload(["tests.store.crash_steps"])


def _in_child(path: Path, work: str, kill_at: int) -> int:
    """Run `work` (a step's name, or UPGRADE) on `path` in a child process that dies before statement `kill_at`."""
    child = _CHILDREN.Process(target=die_before_statement, args=(str(path), work, kill_at))
    child.start()
    child.join(timeout=120)
    code = child.exitcode
    assert code is not None, f"{work}: the child killed before statement {kill_at} did not finish"
    child.close()
    return code


def _seeded_base(path: Path) -> None:
    with open_at(path) as store:
        seed(store)


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
    assert _in_child(trial, name, kill_at) == KILLED
    state = _dump(trial)
    assert state in (seeded.before, seeded.after[name]), \
        f"{name}: killed before statement {kill_at} of {total}: a mixed state"
    if kill_at == 1:
        assert state == seeded.before
    with open_at(trial) as reopened:
        reopened.compact()


@pytest.mark.parametrize("name", list(STEPS))
def test_a_step_run_to_its_end_leaves_after(seeded: Seeded, tmp_path: Path, name: str) -> None:
    assert seeded.after[name] != seeded.before, "the step must change something"
    trial = tmp_path / "trial.db"
    shutil.copy(seeded.base, trial)
    assert _in_child(trial, name, seeded.totals[name] + 1) == FINISHED
    assert _dump(trial) == seeded.after[name]


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
    assert _in_child(finished, UPGRADE, 10**9) == FINISHED
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
    assert _in_child(trial, UPGRADE, kill_at) == KILLED
    assert _dump(trial) in (upgrade.before, upgrade.after), f"upgrade killed before statement {kill_at}: a mixed schema"
    with StateStore.open(trial) as reopened:
        assert reopened.all_mappings(NB) == []
    assert _dump(trial) == upgrade.after
