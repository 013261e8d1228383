"""Watch mode: vault file events → the index (and, with `--refresh`, the notebook): the vault event mapping.

- create/modify of a `.md` → `mark_path_modified(path)`; delete of a `.md` → `mark_path_deleted(path)`;
- rename old → new: old `.md` → mark old deleted; new `.md` → mark new modified; old `.md` → new `.md`
  renames the source registry mapping. Old `.md` → anything else is the note leaving the vault, as a
  deletion is: its mapping stays until `refresh --all` (kept, a note renamed away and back — `a.md` →
  `a.txt` → `a.md` — keeps its source instead of being uploaded again).
- an attachment (a file of the kinds the `attachments` setting takes) is watched as a note is: its changes
  mark the index, and an attachment renamed to an attachment takes its mapping along.

watchfiles reports a rename as a deletion plus an addition; the two are paired here by inode (the
inode of every note is remembered from the last scan), which is exact on one filesystem. A folder renamed
or moved is reported as the folder alone: it stands for every note in it (`expand_folders`), so each of
them is renamed. Event batches are debounced by watchfiles. Each batch is applied in atomic store steps, so
stopping at any point (Ctrl-C) leaves a consistent state; a batch the state file cannot take (a full disk)
is reported and the watch goes on.

With `--refresh`, changed notes wait in `VaultWatcher.pending` until the notebook takes them. Unattended, the
watch does not stop when the Google login expires beyond renewal or the plan's usage allowance is used up: it
says so once, keeps the changes pending, and goes on by itself — once `refresh_auth` finds a working login
(tried every minute, `LoginWait`), or once the allowance has reset. `sleep` and `clock` are injectable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
from watchfiles import Change, DefaultFilter, awatch

from nlmsync.app import LoginWait, Orchestrator, spent_error
from nlmsync.app.login_wait import RETRY_SECONDS, Sleep
from nlmsync.config import Settings
from nlmsync.errors import (
    AllowanceSpentError,
    AuthenticationRequiredError,
    DiskFullError,
    NlmsyncError,
    is_disk_full,
    leaf_exceptions,
)
from nlmsync.search import NoteIndex
from nlmsync.store import StateStore
from nlmsync.sync import Branch, RefreshReport
from nlmsync.vault import (
    IGNORED_DIRS,
    NoteChange,
    attachment_suffixes,
    has_note_suffix,
    is_attachment_path,
    is_valid_name,
    normalize_rel_path,
    scan_vault,
)

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from mcp.server.mcpserver import MCPServer

Clock = Callable[[], datetime]
ALLOWANCE_RECHECK_SECONDS = RETRY_SECONDS
"""How long the watch waits to read the allowance again when its reset time has passed (or is not known)."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class WatchEvent:
    """One thing the watch did to the registry or the notebook, for a person (`str()`) or a script (fields).

    `kind`: `renamed` (a synced note moved: `path` → `renamed_to`), `refreshed` (`--refresh` took `branch` for
    `path`), `refresh_failed` (`error`), `failed` (a batch the state file could not take: `error`; the watch goes
    on), `login_expired` (the login expired beyond renewal: `error`; changes wait), `login_back`,
    `allowance_spent` (a window of the usage allowance is used up: `error`, `resets_at`; changes wait),
    `allowance_back`.
    """

    kind: Literal["renamed", "refreshed", "refresh_failed", "failed", "login_expired", "login_back",
                  "allowance_spent", "allowance_back"]
    path: str | None = None
    renamed_to: str | None = None
    branch: str | None = None
    error: str | None = None
    resets_at: str | None = None

    def __str__(self) -> str:
        if self.kind == "renamed":
            return f"renamed {self.path} → {self.renamed_to}"
        if self.kind == "refresh_failed":
            return f"refresh failed: {self.error}"
        if self.kind == "failed":
            return f"not recorded: {self.error}"
        if self.kind == "login_expired":
            return (f"waiting for a Google login: {self.error}. Changed notes wait; refresh_auth is tried every "
                    f"{RETRY_SECONDS:g} s: run 'nlm login' to end the wait")
        if self.kind == "allowance_spent":
            return f"waiting for the usage allowance: {self.error}"
        if self.kind in ("login_back", "allowance_back"):
            what = "the Google login works" if self.kind == "login_back" else "the usage allowance is back"
            return f"{what} again: refreshing the notes that waited"
        return f"{self.branch} {self.path}"


@dataclass(frozen=True)
class FileEvent:
    """A file the vault's watcher saw change: `added`, `modified` or `deleted` (`inode` of what is there now)."""

    kind: NoteChange
    path: str
    inode: int | None = None


@dataclass
class WatchPlan:
    """What one batch of events means: index marks and registry changes (the vault event mapping)."""

    modified: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    renamed_mappings: list[tuple[str, str]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.modified or self.deleted or self.renamed_mappings)


def _add_once(items: list[str], path: str) -> None:
    if path not in items:
        items.append(path)


def pair_renames(events: Iterable[FileEvent], known_inodes: dict[str, int]) -> tuple[list[tuple[str, str]],
                                                                                      list[FileEvent]]:
    """Pair each deletion with an addition of the same inode (a rename); returns (renames, other events)."""
    events = list(events)
    added_by_inode = {e.inode: e for e in events if e.kind == NoteChange.ADDED and e.inode is not None}
    renames: list[tuple[str, str]] = []
    used: set[int] = set()
    for event in events:
        inode = known_inodes.get(event.path)
        if event.kind == NoteChange.DELETED and inode is not None and inode in added_by_inode and inode not in used:
            used.add(inode)
            renames.append((event.path, added_by_inode[inode].path))
    paired = {old for old, _ in renames} | {new for _, new in renames}
    return renames, [e for e in events if e.path not in paired]


def _kind(path: str, attachments: frozenset[str]) -> Literal["note", "attachment"] | None:
    """Whether the watch follows `path`: a note, an attachment (its extension one of `attachments`), or neither."""
    if has_note_suffix(path):
        return "note"
    return "attachment" if is_attachment_path(path, attachments) else None


def plan_watch_actions(events: Iterable[FileEvent], known_inodes: dict[str, int],
                       attachments: frozenset[str] = frozenset()) -> WatchPlan:
    """Map a batch of file events to the index marks and mapping renames they call for (pure). A file with one of
    the extensions `attachments` is followed as a note is; a rename takes its mapping along when the old and new
    paths are of one kind (note to note, attachment to attachment)."""
    renames, rest = pair_renames(events, known_inodes)
    plan = WatchPlan()
    for old, new in renames:
        old_kind, new_kind = _kind(old, attachments), _kind(new, attachments)
        if old_kind is not None:
            _add_once(plan.deleted, old)
            if new_kind == old_kind:
                plan.renamed_mappings.append((old, new))
        if new_kind is not None:
            _add_once(plan.modified, new)
    for event in rest:
        if _kind(event.path, attachments) is None:
            continue
        if event.kind == NoteChange.DELETED:
            _add_once(plan.deleted, event.path)
        else:
            _add_once(plan.modified, event.path)
    return plan


def _relative(root: Path, raw: str) -> str | None:
    try:
        rel = Path(raw).relative_to(root)
    except ValueError:
        return None
    if not rel.parts or rel.parts[0] in IGNORED_DIRS or not is_valid_name(raw):
        return None  # a name that is not UTF-8 is no vault path: the walk reports it as skipped
    return normalize_rel_path(rel.as_posix())


def _inode(root: Path, rel: str) -> int | None:
    try:
        return (root / rel).stat().st_ino
    except OSError:
        return None


def to_events(root: Path, changes: Iterable[tuple[Change, str]]) -> list[FileEvent]:
    events: list[FileEvent] = []
    for change, raw in sorted(changes, key=lambda c: (c[0] != Change.deleted, c[1])):
        rel = _relative(root, raw)
        if rel is None:
            continue
        if change == Change.deleted:
            events.append(FileEvent(NoteChange.DELETED, rel))
        else:
            kind = NoteChange.ADDED if change == Change.added else NoteChange.MODIFIED
            events.append(FileEvent(kind, rel, _inode(root, rel)))
    return events


def expand_folders(root: Path, events: Iterable[FileEvent], known_inodes: dict[str, int],
                   attachments: frozenset[str] = frozenset()) -> list[FileEvent]:
    """`events` with each folder event as the events of the notes (and attachments, of the extensions
    `attachments`) in it: a folder deleted (or moved away) is the deletion of every known file under it, a folder
    added (or moved here) the addition of every file the walk finds in it — so a folder renamed is, once paired by
    inode, the rename of each of its files. Other events are kept as they are."""
    expanded: list[FileEvent] = []
    for event in events:
        if _kind(event.path, attachments) is not None:
            expanded.append(event)
        elif event.kind == NoteChange.DELETED:
            prefix = event.path + "/"
            inside = [FileEvent(NoteChange.DELETED, path) for path in known_inodes if path.startswith(prefix)]
            expanded.extend(inside or [event])
        elif (root / event.path).is_dir():
            scan = scan_vault(root / event.path, attachments)
            for file in sorted([*scan.notes, *scan.attachments], key=lambda f: f.path):
                path = f"{event.path}/{file.path}"
                expanded.append(FileEvent(NoteChange.ADDED, path, _inode(root, path)))
        else:
            expanded.append(event)
    return expanded


def note_inodes(root: Path, attachments: frozenset[str] = frozenset()) -> dict[str, int]:
    """The inode of every note of the vault under `root`, and of every attachment of the extensions `attachments`."""
    inodes: dict[str, int] = {}
    scan = scan_vault(root, attachments)
    for file in [*scan.notes, *scan.attachments]:
        inode = _inode(root, file.path)
        if inode is not None:
            inodes[file.path] = inode
    return inodes


class _VaultFilter(DefaultFilter):
    """watchfiles' default filter, also ignoring nlmsync's own state folder and the vault's tool folders."""

    def __init__(self) -> None:
        super().__init__(ignore_dirs=(*DefaultFilter.ignore_dirs, *IGNORED_DIRS))


class VaultWatcher:
    """Applies watch plans to the index, the registry and (optionally) the notebook."""

    def __init__(self, settings: Settings, store: StateStore, orchestrator: Orchestrator | None,
                 on_message: Callable[[WatchEvent], None], *, sleep: Sleep = anyio.sleep,
                 clock: Clock = _utc_now) -> None:
        self.root = Path(settings.vault).resolve()
        self.store = store
        self.index = NoteIndex(self.root, store.db, settings)
        self.orchestrator = orchestrator
        self.on_message = on_message
        self.attachments = attachment_suffixes(settings.attachments)
        """The extensions of the attachments the watch follows beside notes (the `attachments` setting's kinds)."""
        self.inodes = note_inodes(self.root, self.attachments)
        self.pending: dict[str, None] = {}
        """Changed notes the notebook has not taken yet, in order."""
        self.held: Literal["login", "allowance"] | None = None
        """Why the notebook waits (pending notes are kept meanwhile), or None."""
        self.login = LoginWait(sleep=sleep)
        self.tasks: TaskGroup | None = None
        """Where a wait runs (the watch's task group): without one, a refresh that cannot go on just fails."""
        self._sleep = sleep
        self._clock = clock
        self._flushing = anyio.Lock()

    async def apply(self, events: list[FileEvent]) -> WatchPlan:
        events = expand_folders(self.root, events, self.inodes, self.attachments)
        plan = plan_watch_actions(events, self.inodes, self.attachments)
        for path in plan.deleted:
            self.index.mark_path_deleted(path)
            self.inodes.pop(path, None)
        for path in plan.modified:
            self.index.mark_path_modified(path)
        for event in events:
            if (event.kind != NoteChange.DELETED and event.inode is not None
                    and _kind(event.path, self.attachments) is not None):
                self.inodes[event.path] = event.inode
        with self.store.writer():
            for old, new in plan.renamed_mappings:
                self.store.apply_vault_rename(old, new)
                self.on_message(WatchEvent("renamed", path=old, renamed_to=new))
        if plan:
            self.index.sync()
        if self.orchestrator is not None and plan.modified:
            self.pending.update(dict.fromkeys(plan.modified))
            await self.flush()
        return plan

    async def flush(self) -> None:
        """Refresh the pending notes, unless the watch waits for a login or the allowance (they stay pending)."""
        assert self.orchestrator is not None
        async with self._flushing:
            if self.held is not None or not self.pending:
                return
            paths = list(self.pending)
            try:
                await self._allowance_left()
                report = await self.orchestrator.keep_current(paths)
            except (AuthenticationRequiredError, AllowanceSpentError) as exc:
                self._refreshed(exc.report if isinstance(exc.report, RefreshReport) else None, paths=())
                if self.tasks is None:
                    raise
                self._hold(exc)
                return
            except NlmsyncError as exc:
                self._refreshed(exc.report if isinstance(exc.report, RefreshReport) else None, paths)
                self.on_message(WatchEvent("refresh_failed", error=str(exc)))
                return
            self._refreshed(report, paths)

    def _refreshed(self, report: RefreshReport | None, paths: Iterable[str]) -> None:
        """Say what `report` did; `paths` and the notes it took leave the pending ones."""
        done = [note for note in report.notes if note.branch != Branch.FAILED] if report is not None else []
        for path in [*paths, *(note.path for note in done)]:
            self.pending.pop(path, None)
        for note in report.notes if report is not None else ():
            if note.path not in self.pending:
                self.on_message(WatchEvent("refreshed", path=note.path, branch=note.branch.value, error=note.error))

    async def _allowance_left(self) -> None:
        """Hold the notebook back while a window of the plan's usage allowance is used up.

        Raises:
            AllowanceSpentError: a window has nothing left (its reset time in the error).
        """
        assert self.orchestrator is not None
        usage = await self.orchestrator.allowance.read(self.orchestrator.client)
        window = usage.spent_window() if usage is not None else None
        if window is not None:
            raise spent_error(window, held="changed notes wait for it")

    def _hold(self, exc: AuthenticationRequiredError | AllowanceSpentError) -> None:
        """Wait (in the watch's task group) for a login or for the allowance, then refresh what waited."""
        assert self.tasks is not None
        if isinstance(exc, AuthenticationRequiredError):
            self.held = "login"
            self.login.lost(exc)
            self.on_message(WatchEvent("login_expired", error=exc.message))
        else:
            self.held = "allowance"
            resets = exc.resets_at.isoformat() if exc.resets_at is not None else None
            self.on_message(WatchEvent("allowance_spent", error=exc.message, resets_at=resets))
        self.tasks.start_soon(self._wait_then_resume, exc)

    async def _wait_then_resume(self, exc: AuthenticationRequiredError | AllowanceSpentError) -> None:
        assert self.orchestrator is not None
        if isinstance(exc, AuthenticationRequiredError):
            await self.login.wait(self.orchestrator.client.renew_login)
            self.on_message(WatchEvent("login_back"))
        else:
            await self._wait_for_allowance(exc.resets_at)
            self.on_message(WatchEvent("allowance_back"))
        self.held = None
        await self.flush()

    async def _wait_for_allowance(self, resets_at: datetime | None) -> None:
        """Sleep until `resets_at`, then read the allowance again; again while a window is still used up."""
        assert self.orchestrator is not None
        while True:
            now = self._clock()
            due = resets_at is not None and resets_at > now
            await self._sleep((resets_at - now).total_seconds() if due and resets_at else ALLOWANCE_RECHECK_SECONDS)
            try:
                usage = await self.orchestrator.allowance.read(self.orchestrator.client, fresh=True)
            except NlmsyncError:
                resets_at = None
                continue
            window = usage.spent_window() if usage is not None else None
            if window is None:
                return
            resets_at = window.resets_at


async def watch_vault(settings: Settings, *, refresh: bool = False, on_message: Callable[[WatchEvent], None] = print,
                      stop_event: anyio.Event | None = None, on_batch: Callable[[WatchPlan], None] | None = None,
                      server: str | MCPServer[Any] | None = None, sleep: Sleep = anyio.sleep,
                      clock: Clock = _utc_now) -> None:
    """Watch the vault until `stop_event` is set (or the task is cancelled / Ctrl-C). `sleep` and `clock` are what
    a wait for a login or for the usage allowance sleeps on and reads the time from. The vault is a folder: the
    command line checks it first (`vault.check_vault`), as every command does."""
    if refresh:
        async with Orchestrator.open(settings, server=server) as orch:
            watcher = VaultWatcher(settings, orch.store, orch, on_message, sleep=sleep, clock=clock)
            await _loop(watcher, stop_event, on_batch, settings.watch_debounce_ms)
        return
    store = StateStore.open(settings.state_path, settings)
    try:
        await _loop(VaultWatcher(settings, store, None, on_message), stop_event, on_batch, settings.watch_debounce_ms)
    finally:
        store.close()


def _batch_problem(exc: BaseException, store: StateStore) -> NlmsyncError | None:
    """What stopped a batch, as the error to report, when the watch can go on after it; None when it cannot."""
    for leaf in leaf_exceptions(exc):
        if isinstance(leaf, NlmsyncError):
            return leaf
        if is_disk_full(leaf):
            return DiskFullError(getattr(leaf, "filename", None) or store.path or "")
    return None


async def _loop(watcher: VaultWatcher, stop_event: anyio.Event | None, on_batch: Callable[[WatchPlan], None] | None,
                debounce: int) -> None:
    watcher.index.sync()
    async with anyio.create_task_group() as tasks:
        watcher.tasks = tasks  # a wait for a login or the allowance runs here, beside the file events
        # yield_on_timeout: an empty batch now and then lets `on_batch` see that the watch is running.
        async for changes in awatch(watcher.root, watch_filter=_VaultFilter(), debounce=debounce,
                                    stop_event=stop_event, step=20, rust_timeout=200, yield_on_timeout=True):
            try:
                plan = await watcher.apply(to_events(watcher.root, changes)) if changes else WatchPlan()
            except (NlmsyncError, OSError, ExceptionGroup) as exc:
                # the state file cannot take this batch (a full disk, another run holding it): say so and keep
                # watching; the index's marks stay for the next batch, and `refresh` rebinds moved notes by content
                problem = _batch_problem(exc, watcher.store)
                if problem is None:
                    raise
                watcher.on_message(WatchEvent("failed", error=str(problem)))
                plan = WatchPlan()
            if on_batch is not None:
                on_batch(plan)
        tasks.cancel_scope.cancel()
