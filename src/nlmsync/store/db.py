"""Opening the state file: refusal of corrupt or newer files (checked read-only first), WAL, migrations.

A file that is not SQLite, is damaged, was written by a newer nlmsync, or is another program's SQLite
database is refused before anything is written to it, so it stays byte-identical.

Every open reads the file's header and its schema and migration history: a file cut short, one whose schema
cannot be read, or that is not an nlmsync state file is refused there. Reading every page (SQLite's
`quick_check`) is kept for where it protects something: when the last process that had the file open
stopped without closing it (its write-ahead log is left behind and no process holds the file), before a
schema upgrade writes to it, and on `nlmsync check` (`check_integrity`). Damage met later, in a page a
command reads, is refused as it is met (`state_failure`: exit 2, the file left as it is); the search index's
own parts carry checksums of their own and are rebuilt when damaged.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync.errors import (
    DiskFullError,
    NlmsyncError,
    StateCorruptError,
    StateError,
    StateTooNewError,
    is_disk_full,
)
from nlmsync.store import schema
from nlmsync.store._lock import state_file_busy
from nlmsync.store.schema import MIGRATION_NAMES, MIGRATION_SET, MIGRATIONS_TABLE
from nlmsync.store.transaction import transaction

if TYPE_CHECKING:
    from sqlite_utils import Database

SQLITE_HEADER = b"SQLite format 3\x00"
# What a path that is no regular file is, in the words of an error naming it.
_KINDS = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO",
          stat.S_IFSOCK: "a socket"}
# How long a statement waits for a lock another process holds on the state file before the run stops as busy
# (exit 7). nlmsync's own writes hold it for milliseconds (one note per step), an index save of a large vault
# for a few seconds; anything longer is another program keeping the file locked.
BUSY_TIMEOUT_SECONDS = 10.0
# The integrity check reads every page. Through a memory map the kernel maps the page cache in runs of
# pages instead of answering one read call per page.
_CHECK_MMAP_BYTES = 1 << 30
_HEADER_BYTES = 100


def move_aside_hint(path: Path | str) -> str:
    """How to set a refused state file aside, as a command that pastes into a shell whatever the path."""
    command = f"mv {shlex.quote(str(path))} {shlex.quote(f'{path}.broken')}"
    return f"move it aside ({command}) and run again to start with a fresh state"


def _corrupt(path: Path, detail: str) -> StateCorruptError:
    return StateCorruptError(f"{path}: state file is not a usable nlmsync database ({detail})",
                             hint=move_aside_hint(path))


def _unknown_migrations(applied: list[str]) -> list[str]:
    return [name for name in applied if name not in MIGRATION_NAMES]


def _too_new(path: Path, unknown: list[str]) -> StateTooNewError:
    return StateTooNewError(
        f"{path}: state file was written by a newer nlmsync (unknown schema step {unknown[0]!r}); "
        "it was not modified",
        hint="upgrade nlmsync, or point --state at another file",
    )


def is_busy(exc: sqlite3.OperationalError) -> bool:
    """Whether SQLite gave up waiting for a lock another connection holds."""
    return "locked" in str(exc) or "busy" in str(exc)


# SQLite's primary result codes that say what is wrong with the file, not with nlmsync's use of it
_DAMAGED = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB
_UNUSABLE = frozenset({3, 8, 10, 14})  # SQLITE_PERM, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CANTOPEN
_UNUSABLE_WORDS = ("disk I/O error", "readonly database", "unable to open")


def state_failure(path: Path | str, exc: sqlite3.Error, doing: str) -> NlmsyncError | None:
    """What `exc`, met while `doing` ("read", "write", "open") the state file at `path`, means for the user:
    another process keeps it locked (exit 7), no room to write (exit 7), the file is damaged (exit 2, with
    the hint to move it aside — only then), it cannot be read or written here (exit 2); None for anything else.
    A full disk or a read-only folder is never taken for damage: moving the file aside would lose the state."""
    if isinstance(exc, sqlite3.OperationalError) and is_busy(exc):
        return state_file_busy(Path(path), str(exc), BUSY_TIMEOUT_SECONDS)
    if is_disk_full(exc, path):
        return DiskFullError(path)
    code = (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF
    if code in _DAMAGED or type(exc) is sqlite3.DatabaseError:
        return _corrupt(Path(path), str(exc))
    if code in _UNUSABLE or any(words in str(exc) for words in _UNUSABLE_WORDS):
        return StateError(f"{path}: cannot {doing} the state file ({exc})")
    return None


def check_state_file(path: Path, *, full: bool = False) -> None:
    """Refuse a state file this version must not touch; a missing or empty file is fine.

    Every page is read (`PRAGMA quick_check`) when `full`, before a schema upgrade, and after an unclean stop
    (`stopped_uncleanly`); otherwise the header, the schema and the migration history.

    Raises:
        StateCorruptError: not an SQLite file, or damaged (message names the file, hint says how to move it aside).
        StateTooNewError: its migration history names a step this version does not know.
        StateError: the file cannot be read at all, or is another program's SQLite database.
        StateLockedError: another process kept the file locked for longer than `BUSY_TIMEOUT_SECONDS`.
    """
    try:
        mode = path.stat().st_mode
        if stat.S_ISDIR(mode):
            raise _corrupt(path, "it is a directory")
        if not stat.S_ISREG(mode):  # opened, a FIFO would wait for a writer; /dev/null reads as a new file
            raise StateError(f"{path}: a state file is a regular file, not {_KINDS.get(stat.S_IFMT(mode), 'this')}",
                             hint="point --state at a file, or at a path where none is yet")
        with path.open("rb") as handle:
            header = handle.read(_HEADER_BYTES)
            size = os.fstat(handle.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StateError(f"{path}: cannot read state file ({exc.strerror})") from None
    if not header:
        return
    if header[:len(SQLITE_HEADER)] != SQLITE_HEADER:
        raise _corrupt(path, "not an SQLite file")
    _check_header(path, header, size)
    full = full or stopped_uncleanly(path)
    # Without a -wal file no connection has the file open and there is nothing beyond the main file to
    # read: `immutable` then keeps SQLite from creating -wal/-shm beside a file it may be about to refuse.
    # An immutable read takes no locks, so a writer starting meanwhile can make a healthy file look
    # damaged: a file that changed during that read is read again, with locks.
    has_wal = Path(f"{path}-wal").exists()
    stamp = _stamp(path)
    try:
        applied, foreign = _read_history(path, immutable=not has_wal, full=full)
    except StateCorruptError:
        if has_wal or (_stamp(path) == stamp and not Path(f"{path}-wal").exists()):
            raise
        applied, foreign = _read_history(path, immutable=False, full=full)
    if foreign and not applied:
        raise StateError(f"{path}: an SQLite database but not an nlmsync state file (it holds tables nlmsync "
                         "did not create); it was not modified",
                         hint="point --state at an nlmsync state file or at a new path")
    unknown = _unknown_migrations(applied)
    if unknown:
        raise _too_new(path, unknown)


def check_integrity(path: Path) -> None:
    """`nlmsync check`: read every page of the state file (and its schema and history), whatever else holds.

    Raises:
        StateCorruptError, StateTooNewError, StateError, StateLockedError: as `check_state_file`.
    """
    check_state_file(path, full=True)


def _check_header(path: Path, header: bytes, size: int) -> None:
    """Refuse a file of `size` bytes shorter than its `header` (its first `_HEADER_BYTES`) says: cut short (a
    partial copy, a full disk, a truncation).

    The header's page count is trusted only when it says it is current (SQLite's "version-valid-for" equals the
    change counter); an older SQLite's file, which does not keep it, is left to the schema's reading."""
    if len(header) < _HEADER_BYTES:
        raise _corrupt(path, "file is shorter than its header")
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if header[24:28] == header[92:96] and page_size and pages * page_size > size:
        raise _corrupt(path, f"file is cut short: {size} bytes, its header says {pages * page_size}")


def stopped_uncleanly(path: Path) -> bool:
    """Whether the last process that had the state file open stopped without closing it: its write-ahead log
    is still there (the last connection to close removes it) and no process holds a lock on the file's shared
    memory (every open connection does). Where the locks cannot be read, a log left behind is enough."""
    wal, shm = Path(f"{path}-wal"), Path(f"{path}-shm")
    if not wal.exists():
        return False
    try:
        inode = shm.stat().st_ino
        locks = Path("/proc/locks").read_text(encoding="ascii", errors="replace").splitlines()
    except OSError:
        return True
    for line in locks:
        # "1: POSIX  ADVISORY  READ 1234 08:01:5678 128 128"; "->" marks a process waiting for a lock
        fields = line.split()
        if len(fields) >= 6 and fields[1] != "->" and fields[5].rsplit(":", 1)[-1] == str(inode):
            return False
    return True


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


def connect_read_only(path: Path, *, immutable: bool) -> sqlite3.Connection:
    """A read-only connection to the state file at `path`, which must exist: it takes no writer lock and creates
    nothing. `immutable` (only when no `-wal` file is there: no connection has the file open) also takes no read
    lock and makes no `-wal`/`-shm` files.

    Raises:
        StateCorruptError, StateLockedError: the file cannot be opened.
    """
    try:
        return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro{'&immutable=1' if immutable else ''}", uri=True,
                               timeout=BUSY_TIMEOUT_SECONDS)
    except sqlite3.Error as exc:
        raise state_failure(path, exc, "read") or _corrupt(path, str(exc)) from None


def _read_history(path: Path, *, immutable: bool, full: bool) -> tuple[list[str], bool]:
    """Read the file's schema read-only; return the names of its applied nlmsync schema steps, and whether it
    holds tables of its own (an empty database is a new state file, another one is not). Every page is
    checked when `full` or when a schema step is pending on a file that has some (an upgrade writes next)."""
    conn = connect_read_only(path, immutable=immutable)
    try:
        tables = {row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")}
        applied = [] if MIGRATIONS_TABLE not in tables else [row[0] for row in conn.execute(
            f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ?", [MIGRATION_SET])]
        if full or (applied and set(MIGRATION_NAMES) - set(applied)):
            conn.execute(f"PRAGMA mmap_size = {_CHECK_MMAP_BYTES}")
            problems = [row[0] for row in conn.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise _corrupt(path, f"integrity check: {problems[0]}")
        return applied, bool(tables - {MIGRATIONS_TABLE})
    except sqlite3.OperationalError as exc:
        raise state_failure(path, exc, "read") or StateError(f"{path}: cannot read the state file ({exc})") from None
    except sqlite3.DatabaseError as exc:
        raise _corrupt(path, str(exc)) from None
    finally:
        conn.close()


def open_connection(path: Path) -> sqlite3.Connection:
    """`open_database` as a plain `sqlite3` connection: the same checks, WAL and migrations, but
    sqlite-utils is imported only when the file needs a migration step (a new or older file). What a
    fresh process answering one search uses (the index cache needs nothing more).

    Raises:
        StateCorruptError, StateTooNewError, StateError, StateLockedError: see `check_state_file`; the
            file is untouched.
    """
    check_state_file(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, check_same_thread=False, timeout=BUSY_TIMEOUT_SECONDS)
    except (OSError, sqlite3.Error) as exc:
        if is_disk_full(exc, path):
            raise DiskFullError(path) from None
        raise StateError(f"{path}: cannot open state file ({exc})") from None
    try:
        if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
            conn.execute("PRAGMA journal_mode=wal")
        # In WAL mode NORMAL syncs at checkpoints, not at every commit: a commit survives a crash of the
        # process (kill -9) at once, and only a power loss can take back the last ones — which a run
        # recovers like any crash, by deterministic titles and adoption. One fsync per step made every
        # reused note of a refresh cost ~15 ms on a busy disk.
        conn.execute("PRAGMA synchronous=NORMAL")
        applied = _applied(conn)
        unknown = _unknown_migrations(applied)
        if unknown:
            raise _too_new(path, unknown)
        if set(MIGRATION_NAMES) - set(applied):
            from sqlite_utils import Database

            migrate(Database(conn), path)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if isinstance(exc, sqlite3.OperationalError):
            raise state_failure(path, exc, "prepare") or StateError(
                f"{path}: cannot prepare state file ({exc})") from None
        raise _corrupt(path, str(exc)) from None
    except BaseException:
        conn.close()
        raise
    return conn


def _applied(conn: sqlite3.Connection) -> list[str]:
    """The names of the nlmsync schema steps recorded in the file (none for a new file)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [MIGRATIONS_TABLE]).fetchone():
        return [row[0] for row in conn.execute(f"SELECT name FROM {MIGRATIONS_TABLE} WHERE migration_set = ?",
                                               [MIGRATION_SET])]
    return []


def open_database(path: Path) -> Database:
    """Open (creating if needed) the state database at `path` and bring its schema up to date.

    The connection is made with `check_same_thread=False` (callers serialize access), WAL mode with
    `synchronous=NORMAL`, and a busy timeout so short writes by another process are waited for.

    Raises:
        StateCorruptError, StateTooNewError, StateError: see `check_state_file`; the file is untouched.
    """
    from sqlite_utils import Database

    conn = open_connection(path)
    try:
        return Database(conn)
    except BaseException:
        conn.close()
        raise


def migrate(db: Database, path: Path | str = "state file") -> None:
    """Apply pending migrations in one `BEGIN IMMEDIATE` transaction (safe against a concurrent opener).

    Raises:
        StateTooNewError: the history names a step this version does not know (nothing is written).
    """
    migrations = schema.migrations
    applied = [m.name for m in migrations.applied(db)]
    unknown = _unknown_migrations(applied)
    if unknown:
        raise _too_new(Path(path), unknown)
    if not migrations.pending(db):
        return
    with transaction(db.conn, immediate=True):
        unknown = _unknown_migrations([m.name for m in migrations.applied(db)])
        if unknown:
            raise _too_new(Path(path), unknown)
        migrations.apply(db)
