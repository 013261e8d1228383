"""Watch mode: vault file events → the index (and, with `--refresh`, the notebook): the vault event mapping.

- create/modify of a `.md` → `mark_path_modified(path)`; delete of a `.md` → `mark_path_deleted(path)`;
- rename old → new: old `.md` → mark old deleted; new `.md` → mark new modified; old `.md` → new `.md`
  renames the source registry mapping. Old `.md` → anything else is the note leaving the vault, as a
  deletion is: its mapping stays until `refresh --all` (kept, a note renamed away and back — `a.md` →
  `a.txt` → `a.md` — keeps its source instead of being uploaded again).

watchfiles reports a rename as a deletion plus an addition; the two are paired here by inode (the
inode of every note is remembered from the last scan), which is exact on one filesystem. A folder renamed
or moved is reported as the folder alone: it stands for every note in it (`expand_folders`), so each of
them is renamed. Event batches are debounced by watchfiles. Each batch is applied in atomic store steps, so
stopping at any point (Ctrl-C) leaves a consistent state; a batch the state file cannot take (a full disk)
is reported and the watch goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import anyio
from watchfiles import Change, DefaultFilter, awatch

from nlmsync.app import Orchestrator
from nlmsync.config import Settings
from nlmsync.errors import DiskFullError, InputError, NlmsyncError, is_disk_full, leaf_exceptions
from nlmsync.search import NoteIndex
from nlmsync.store import StateStore
from nlmsync.vault import (
    IGNORED_DIRS,
    NoteChange,
    has_note_suffix,
    is_valid_name,
    normalize_rel_path,
    scan_vault,
)

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


@dataclass(frozen=True)
class WatchEvent:
    """One thing the watch did to the registry or the notebook, for a person (`str()`) or a script (fields).

    `kind`: `renamed` (a synced note moved: `path` → `renamed_to`), `refreshed` (`--refresh` took `branch` for
    `path`), `refresh_failed` (`error`), `failed` (a batch the state file could not take: `error`; the watch goes
    on).
    """

    kind: Literal["renamed", "refreshed", "refresh_failed", "failed"]
    path: str | None = None
    renamed_to: str | None = None
    branch: str | None = None
    error: str | None = None

    def __str__(self) -> str:
        if self.kind == "renamed":
            return f"renamed {self.path} → {self.renamed_to}"
        if self.kind == "refresh_failed":
            return f"refresh failed: {self.error}"
        if self.kind == "failed":
            return f"not recorded: {self.error}"
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


def plan_watch_actions(events: Iterable[FileEvent], known_inodes: dict[str, int]) -> WatchPlan:
    """Map a batch of file events to the index marks and mapping renames they call for (pure)."""
    renames, rest = pair_renames(events, known_inodes)
    plan = WatchPlan()
    for old, new in renames:
        if has_note_suffix(old):
            _add_once(plan.deleted, old)
            if has_note_suffix(new):
                plan.renamed_mappings.append((old, new))
        if has_note_suffix(new):
            _add_once(plan.modified, new)
    for event in rest:
        if not has_note_suffix(event.path):
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


def expand_folders(root: Path, events: Iterable[FileEvent], known_inodes: dict[str, int]) -> list[FileEvent]:
    """`events` with each folder event as the events of the notes in it: a folder deleted (or moved away) is
    the deletion of every known note under it, a folder added (or moved here) the addition of every note the
    walk finds in it — so a folder renamed is, once paired by inode, the rename of each of its notes. Other
    events are kept as they are."""
    expanded: list[FileEvent] = []
    for event in events:
        if has_note_suffix(event.path):
            expanded.append(event)
        elif event.kind == NoteChange.DELETED:
            prefix = event.path + "/"
            inside = [FileEvent(NoteChange.DELETED, path) for path in known_inodes if path.startswith(prefix)]
            expanded.extend(inside or [event])
        elif (root / event.path).is_dir():
            for note in scan_vault(root / event.path).notes:
                path = f"{event.path}/{note.path}"
                expanded.append(FileEvent(NoteChange.ADDED, path, _inode(root, path)))
        else:
            expanded.append(event)
    return expanded


def note_inodes(root: Path) -> dict[str, int]:
    inodes: dict[str, int] = {}
    for note in scan_vault(root).notes:
        inode = _inode(root, note.path)
        if inode is not None:
            inodes[note.path] = inode
    return inodes


class _VaultFilter(DefaultFilter):
    """watchfiles' default filter, also ignoring nlmsync's own state folder and the vault's tool folders."""

    def __init__(self) -> None:
        super().__init__(ignore_dirs=(*DefaultFilter.ignore_dirs, *IGNORED_DIRS))


class VaultWatcher:
    """Applies watch plans to the index, the registry and (optionally) the notebook."""

    def __init__(self, settings: Settings, store: StateStore, orchestrator: Orchestrator | None,
                 on_message: Callable[[WatchEvent], None]) -> None:
        self.root = Path(settings.vault).resolve()
        self.store = store
        self.index = NoteIndex(self.root, store.db, settings)
        self.orchestrator = orchestrator
        self.on_message = on_message
        self.inodes = note_inodes(self.root)

    async def apply(self, events: list[FileEvent]) -> WatchPlan:
        events = expand_folders(self.root, events, self.inodes)
        plan = plan_watch_actions(events, self.inodes)
        for path in plan.deleted:
            self.index.mark_path_deleted(path)
            self.inodes.pop(path, None)
        for path in plan.modified:
            self.index.mark_path_modified(path)
        for event in events:
            if event.kind != NoteChange.DELETED and event.inode is not None and has_note_suffix(event.path):
                self.inodes[event.path] = event.inode
        with self.store.writer():
            for old, new in plan.renamed_mappings:
                self.store.apply_vault_rename(old, new)
                self.on_message(WatchEvent("renamed", path=old, renamed_to=new))
        if plan:
            self.index.sync()
        if self.orchestrator is not None and plan.modified:
            await self._refresh(plan.modified)
        return plan

    async def _refresh(self, modified: list[str]) -> None:
        assert self.orchestrator is not None
        try:
            report = await self.orchestrator.keep_current(modified)
        except NlmsyncError as exc:
            self.on_message(WatchEvent("refresh_failed", error=str(exc)))
            return
        for note in report.notes if report else ():
            self.on_message(WatchEvent("refreshed", path=note.path, branch=note.branch.value,
                                       error=note.error))


async def watch_vault(settings: Settings, *, refresh: bool = False, on_message: Callable[[WatchEvent], None] = print,
                      stop_event: anyio.Event | None = None, on_batch: Callable[[WatchPlan], None] | None = None,
                      server: str | MCPServer[Any] | None = None) -> None:
    """Watch the vault until `stop_event` is set (or the task is cancelled / Ctrl-C).

    Raises:
        InputError: the vault is not a directory (nothing is created).
    """
    if not Path(settings.vault).is_dir():
        raise InputError(f"{settings.vault}: the vault is not a directory")
    debounce = settings.watch_debounce_ms
    if refresh:
        async with Orchestrator.open(settings, server=server) as orch:
            await _loop(settings, orch.store, orch, on_message, stop_event, on_batch, debounce)
        return
    store = StateStore.open(settings.state_path, settings)
    try:
        await _loop(settings, store, None, on_message, stop_event, on_batch, debounce)
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


async def _loop(settings: Settings, store: StateStore, orch: Orchestrator | None,
                on_message: Callable[[WatchEvent], None],
                stop_event: anyio.Event | None, on_batch: Callable[[WatchPlan], None] | None, debounce: int) -> None:
    watcher = VaultWatcher(settings, store, orch, on_message)
    watcher.index.sync()
    # yield_on_timeout: an empty batch now and then lets `on_batch` see that the watch is running.
    async for changes in awatch(watcher.root, watch_filter=_VaultFilter(), debounce=debounce, stop_event=stop_event,
                                step=20, rust_timeout=200, yield_on_timeout=True):
        try:
            plan = await watcher.apply(to_events(watcher.root, changes)) if changes else WatchPlan()
        except (NlmsyncError, OSError, ExceptionGroup) as exc:
            # the state file cannot take this batch (a full disk, another run holding it): say so and keep
            # watching; the index's marks stay for the next batch, and `refresh` rebinds moved notes by content
            problem = _batch_problem(exc, store)
            if problem is None:
                raise
            on_message(WatchEvent("failed", error=str(problem)))
            plan = WatchPlan()
        if on_batch is not None:
            on_batch(plan)
