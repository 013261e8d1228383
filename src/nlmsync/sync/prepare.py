"""`ensure_sources_for_paths` (spec §5): make exactly the given notes live sources in a notebook.

For each path: read, hash the exact text to upload, load the registry rows and resolve their alias
chains, then take exactly one branch (`plan.decide_branch`): reuse, replace add-first, rename by hash,
or new (after making room, §6). Titles are deterministic, so before any add — and after any add whose
answer was lost — the remote listing is searched for that exact title and a match is adopted instead
of uploading twice.

A note whose file has the modification time and size recorded when it was last read (`note_hashes` in the
state file) is not read again: its recorded part hashes decide its branch, and it is read only if it has to
be uploaded. An idle run costs a `stat` per note, not a read and a hash.

Uploads of independent notes run concurrently (bounded by `concurrency`; the client paces them to
`add_rate_per_minute`); evictions happen one by one before the uploads they make room for; the
registry is written note by note in the order the paths were given, each changed note in one atomic
step, the uses of notes reused as they are recorded together (one step for an idle run).
A note that fails is reported and leaves its previous registry rows untouched; the rest go on.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from nlmsync import vault as vault_files
from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    CapacityError,
    ConnectionProblem,
    InputError,
    NlmsyncError,
    NotebookLMError,
    NotFoundError,
    ServerCommandNotFoundError,
    ServerUnreachableError,
)
from nlmsync.store import NoteHashes
from nlmsync.sync.eviction import CAPACITY_HINT, evict_path, make_room, plan_evictions, strict_delete
from nlmsync.sync.identity import holds_text, screen_title_matches
from nlmsync.sync.plan import (
    Branch,
    Decision,
    PreparedNote,
    ResolvedMapping,
    decide_branch,
    known_note,
    prepare_note,
)
from nlmsync.sync.reconcile import RemoteView, lookup_after_lost_answer
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.split import MAX_SOURCE_BYTES, MAX_SOURCE_WORDS

ProgressCallback = Callable[[NoteOutcome], None]
EXCLUDED_BY_CONFIGURATION = "excluded by configuration"

RACY_MTIME_NS = 2_000_000_000
"""A note modified this close to the moment it is read gets no `note_hashes` record: a later write within
the same timestamp tick (2 s on FAT, 1 s on HFS+, milliseconds elsewhere) could leave its mtime and size
as they were."""

# Errors that doom every remaining call of the run: stop instead of failing note after note.
FATAL_ERRORS = (AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError)


@dataclass
class SyncDeps:
    """What source preparation works with: the server, the registry, the vault and the settings."""

    client: Any
    store: Any
    vault_root: Path
    settings: Settings
    notebook_id: str
    on_progress: ProgressCallback | None = None
    max_words: int = MAX_SOURCE_WORDS
    max_bytes: int = MAX_SOURCE_BYTES

    def progress(self, outcome: NoteOutcome) -> None:
        if self.on_progress is not None:
            self.on_progress(outcome)


@dataclass(frozen=True)
class MirrorScope:
    """What a mirroring run (`refresh --all [PATH…]`) answers for: the registered notes under `roots`
    (vault-relative folders or notes; "" is the whole vault). Their sources are removed when the note
    left the vault or became excluded; registered notes outside the scope are left alone."""

    roots: tuple[str, ...] = ("",)

    def covers(self, path: str) -> bool:
        return any(root in ("", path) or path.startswith(root.rstrip("/") + "/") for root in self.roots)


@dataclass
class _Work:
    note: PreparedNote
    decision: Decision
    titles: tuple[str, ...] = ()
    """The registry titles of the note's rows as the run found them."""


@dataclass
class RegistryView:
    """The notebook's registry rows as a run finds them, read once (`StateStore.mappings_with_resolved_ids`),
    so deciding N notes' branches costs one query, not a few per note."""

    store: Any
    notebook_id: str
    by_path: dict[str, list[tuple[Any, str]]] = field(default_factory=dict)
    by_source: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def read(cls, store: Any, notebook_id: str) -> RegistryView:
        view = cls(store, notebook_id)
        for row, resolved in store.mappings_with_resolved_ids(notebook_id):
            view.by_path.setdefault(row.path, []).append((row, resolved))
            held = view.by_source.get(resolved)
            if held is None or (held.source_id != resolved and row.source_id == resolved):
                view.by_source[resolved] = row
        return view

    def parts(self, path: str) -> list[ResolvedMapping]:
        return [ResolvedMapping(r.part, resolved, r.content_hash, r.source_id) for r, resolved in self.by_path.get(path, ())]

    def row_of_source(self, source_id: str) -> Any:
        """The row holding `source_id` or an id on its alias chain (as `StateStore.mapping_by_source_id`)."""
        row = self.by_source.get(source_id)
        if row is None:
            resolved = self.store.resolve_source_id(source_id)
            row = self.by_source.get(resolved) if resolved != source_id else None
        return row


def split_limits(deps: SyncDeps) -> str:
    """The split limits as a `NoteHashes.split`: hashes made with other limits are not this run's."""
    return f"{deps.max_words}/{deps.max_bytes}"


def load_notes(deps: SyncDeps, paths: Sequence[str], found: Collection[str] = (),
               known: Mapping[str, NoteHashes] | None = None,
               read: list[NoteHashes] | None = None) -> list[_Work | NoteOutcome]:
    """Read and prepare each path; excluded notes become excluded outcomes.

    An unreadable note (binary, invalid UTF-8) fails when the user named it, and is excluded with
    the reason when it was only `found` by walking the vault — as the index skips it — so one stray
    file cannot fail every mirror run. An empty note (white space only, `vault.is_blank`, the index's
    rule) is excluded as `empty`.

    A path whose file has the mtime and size of its `known` record is not read: its note is the recorded
    hashes (`known_note`; the exclude patterns are still applied, front matter cannot have changed).
    Each note read is appended to `read` as a record to keep, unless it was modified too recently to
    trust its mtime (`RACY_MTIME_NS`).
    """
    items: list[_Work | NoteOutcome] = []
    split = split_limits(deps)
    patterns = deps.settings.exclude
    trusted_before = time.time_ns() - RACY_MTIME_NS
    for path in paths:
        try:
            st: os.stat_result | None = os.stat(os.path.join(deps.vault_root, path))
        except (OSError, ValueError):
            st = None
        record = known.get(path) if known and st is not None else None
        if (record is not None and st is not None and record.mtime_ns == st.st_mtime_ns
                and record.size == st.st_size and record.split == split):
            if vault_files.excluded_by_pattern(deps.vault_root, path, patterns):
                items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=EXCLUDED_BY_CONFIGURATION))
            else:
                items.append(_Work(known_note(path, record.hashes), Decision("pending")))
            continue
        try:
            text = vault_files.read_note_text(deps.vault_root, path)
        except (InputError, OSError) as exc:
            if path in found:
                items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=f"not a readable note: {exc}"))
            else:
                items.append(NoteOutcome(path=path, branch=Branch.FAILED, error=str(exc)))
            continue
        if vault_files.is_blank(text):  # the index's rule: nothing but white space is no note to upload
            items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason="empty"))
            continue
        if vault_files.is_excluded(path, text, deps.settings.exclude, root=deps.vault_root):
            items.append(NoteOutcome(path=path, branch=Branch.EXCLUDED, reason=EXCLUDED_BY_CONFIGURATION))
            continue
        note = prepare_note(path, text, deps.max_words, deps.max_bytes)
        items.append(_Work(note, Decision("pending")))
        if read is not None and st is not None and st.st_mtime_ns < trusted_before:
            read.append(NoteHashes(path, st.st_mtime_ns, st.st_size, split, note.hashes))
    return items


def read_for_upload(deps: SyncDeps, items: list[_Work | NoteOutcome], found: Collection[str],
                    read: list[NoteHashes]) -> bool:
    """Read the notes that were recognised by their stat but are to be uploaded after all (their source is
    gone), in place; returns whether there were any (their branches must then be decided again)."""
    unread = {i: item.note.path for i, item in enumerate(items)
              if isinstance(item, _Work) and not item.note.is_read and _needs_upload(item)}
    for index, path in unread.items():
        items[index] = load_notes(deps, [path], found, read=read)[0]
    return bool(unread)


def decide_all(deps: SyncDeps, works: list[_Work], remote: RemoteView, registry: RegistryView) -> None:
    """Fill in each note's decision; a vanished path is claimed by at most one rename."""
    store, nb = deps.store, deps.notebook_id
    requested = {w.note.path for w in works}
    claimed: set[str] = set()
    remote_ids = remote.ids()
    for work in works:
        current = registry.parts(work.note.path)
        work.titles = tuple(r.title for r, _ in registry.by_path.get(work.note.path, ()))
        candidates: list[tuple[str, list[ResolvedMapping]]] = []
        if not any(p.source_id in remote_ids for p in current):
            seen: set[str] = set()
            for row in store.mappings_by_hash(nb, work.note.hashes[0]):
                old = row.path
                if old in seen or old in claimed or old in requested or _exists(deps.vault_root, old):
                    continue
                seen.add(old)
                candidates.append((old, registry.parts(old)))
        work.decision = decide_branch(work.note.hashes, current, remote_ids, candidates)
        if work.decision.rename_from is not None:
            claimed.add(work.decision.rename_from)


def _exists(root: Path, rel_path: str) -> bool:
    try:
        return vault_files.resolve_in_vault(root, rel_path).is_file()
    except InputError:
        return False


def _needs_upload(work: _Work) -> bool:
    return work.decision.kind in ("replace", "new")


def _slots_needed(work: _Work, remote: RemoteView) -> int:
    """Parts that will really be uploaded: a part whose exact title is already listed is adopted."""
    return sum(1 for p in work.note.parts if remote.find_title(p.title) is None)


def _needs_retitle(work: _Work) -> bool:
    """Whether a kept note's registry titles differ from its parts' (renamed, or an earlier retitle failed)."""
    return work.titles != tuple(p.title for p in work.note.parts)


def check_capacity_up_front(deps: SyncDeps, works: list[_Work], remote: RemoteView, registry: RegistryView) -> None:
    """Refuse before any upload when the requested notes alone cannot fit in the notebook.

    Raises:
        CapacityError: the parts of the requested notes plus the sources nlmsync may not evict
            exceed the capacity.
    """
    capacity = deps.settings.capacity
    required = sum(len(w.note.parts) for w in works)
    own_titles = {p.title for w in works for p in w.note.parts}
    untouchable = 0
    for source_id, title in remote.sources.items():
        if title in own_titles and source_id not in remote.foreign:
            continue
        row = registry.row_of_source(source_id)
        if row is None or not row.managed:
            untouchable += 1
    if required + untouchable > capacity:
        if len(remote) > capacity:  # the setting, not the notes, is what is wrong: say so first
            raise CapacityError(f"notebook {deps.notebook_id} holds {len(remote)} sources, capacity is {capacity}: "
                                f"set 'capacity' to your plan's limit; nothing was uploaded", hint=CAPACITY_HINT)
        taken = f" ({untouchable} taken by sources nlmsync did not upload)" if untouchable else ""
        raise CapacityError(
            f"the {len(works)} requested notes need {required} sources but notebook {deps.notebook_id} "
            f"holds at most {capacity}{taken}; nothing was uploaded", hint=CAPACITY_HINT)


def _failed(work: _Work, message: str) -> NoteOutcome:
    return NoteOutcome(path=work.note.path, branch=Branch.FAILED, part_count=len(work.note.parts), error=message)


_BRANCH_OF = {"reuse": Branch.REUSED, "replace": Branch.REPLACED, "rename": Branch.RENAMED, "new": Branch.ADDED}


def _outcome(work: _Work, ids: list[str], adopted: bool) -> NoteOutcome:
    decision = work.decision
    return NoteOutcome(path=work.note.path, branch=_BRANCH_OF[decision.kind], source_ids=ids,
                       previous_source_ids=list(decision.previous), part_count=len(work.note.parts),
                       renamed_from=decision.rename_from, adopted=adopted)


class _Runner:
    """Carries out the decisions: evictions in order, uploads concurrently, registry writes in order."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, protect: set[str], read: list[NoteHashes] | None = None,
                 forget: Collection[str] = ()) -> None:
        self.deps = deps
        self.remote = remote
        self.exclude = set(protect)
        self.reserved = 0
        self.inflight = 0
        self.changed = anyio.Event()
        self.semaphore = anyio.Semaphore(deps.settings.concurrency)
        self.fatal: BaseException | None = None
        self.unmarked: list[str] = []
        """Reused notes whose use is not recorded yet: recorded together, in order, with the next registry
        write or at the end of the run (one step for all of an idle run's notes, not one per note)."""
        self.read = list(read or ())
        self.forget = list(forget)
        """`note_hashes` records to keep and paths whose records go: written with the first such step."""

    def occupied(self) -> int:
        return len(self.remote) + self.reserved

    def _signal(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()

    async def run(self, items: list[_Work | NoteOutcome]) -> list[NoteOutcome]:
        try:
            outcomes = await self._run(items)
        except Exception:
            self._mark_reused()
            raise
        self._mark_reused()
        return outcomes

    def _mark_reused(self) -> None:
        if not self.unmarked and not self.read and not self.forget:
            return
        store = self.deps.store
        with store.step():
            store.mark_used(self.deps.notebook_id, self.unmarked)
            store.record_note_hashes(self.read, self.forget)
        self.unmarked, self.read, self.forget = [], [], []

    async def _run(self, items: list[_Work | NoteOutcome]) -> list[NoteOutcome]:
        results: list[list[NoteOutcome]] = [[] for _ in items]
        stop: BaseException | None = None
        async with anyio.create_task_group() as tg:
            previous = anyio.Event()
            previous.set()
            trailing: list[str] = []  # reused notes after the last task started: recorded once it committed
            for index, item in enumerate(items):
                if isinstance(item, NoteOutcome):
                    results[index].append(item)
                    self.deps.progress(item)
                    continue
                if self.fatal is not None:
                    break
                if self._reused_as_is(item):  # no task: its use is recorded after the notes before it
                    outcome = _outcome(item, list(item.decision.keep), False)
                    (self.unmarked if previous.is_set() else trailing).append(item.note.path)
                    results[index].append(outcome)
                    self.deps.progress(outcome)
                    continue
                needed = _slots_needed(item, self.remote) if _needs_upload(item) else 0
                if needed:
                    try:
                        await self._make_room(needed, results[index])
                    except CapacityError as exc:
                        stop = exc
                        break
                    except FATAL_ERRORS as exc:
                        stop = exc
                        break
                    except NotebookLMError as exc:
                        results[index].append(_failed(item, f"could not make room: {exc}"))
                        continue
                self.reserved += needed
                self.inflight += 1
                done = anyio.Event()
                trailing = []
                tg.start_soon(self._process, item, needed, previous, done, results[index], trailing)
                previous = done
        if stop is None:
            stop = self.fatal
        done = [outcome for group in results for outcome in group]
        if isinstance(stop, NlmsyncError):
            stop.report = done
        if stop is not None:
            raise stop
        return done

    @staticmethod
    def _reused_as_is(work: _Work) -> bool:
        """A reused note with nothing to write but its use: no alias to canonicalize, no retitle."""
        return work.decision.kind == "reuse" and not work.decision.canonicalize and not _needs_retitle(work)

    async def _make_room(self, needed: int, evicted: list[NoteOutcome]) -> None:
        """Evict for `needed` uploads, first letting in-flight notes finish so the choice is deterministic."""
        store, nb, capacity = self.deps.store, self.deps.notebook_id, self.deps.settings.capacity
        while self.occupied() + needed > capacity and self.inflight:
            await self.changed.wait()
        before = len(evicted)
        try:
            await make_room(self.deps.client, store, nb, self.remote, needed, capacity, self.exclude,
                            self.occupied, evicted)
        finally:
            for outcome in evicted[before:]:
                self.deps.progress(outcome)

    async def _process(self, work: _Work, needed: int, previous: anyio.Event, done: anyio.Event,
                       out: list[NoteOutcome], trailing: list[str]) -> None:
        retire: list[str] = []
        try:
            try:
                try:
                    if _needs_upload(work):
                        ids, adopted = await self._upload(work)
                    else:
                        ids, adopted = list(work.decision.keep), False
                    outcome = _outcome(work, ids, adopted)
                except FATAL_ERRORS as exc:
                    self.fatal = exc
                    outcome = _failed(work, str(exc))
                except NotebookLMError as exc:
                    outcome = _failed(work, str(exc))
                finally:
                    self.reserved -= needed
                await previous.wait()
                if outcome.branch != Branch.FAILED:
                    retire = self._commit(work, outcome)
                out.append(outcome)
                self.deps.progress(outcome)
            finally:
                self.unmarked.extend(trailing)
                done.set()
            for source_id in retire:
                await self._delete_best_effort(source_id)
            if outcome.branch == Branch.RENAMED or (outcome.branch == Branch.REUSED and _needs_retitle(work)):
                await self._retitle_best_effort(work)
        finally:
            self.inflight -= 1
            self._signal()

    async def _upload(self, work: _Work) -> tuple[list[str], bool]:
        ids: list[str] = []
        adopted_any = False
        for part in work.note.parts:
            if part.text is None:  # `read_for_upload` reads every note to upload: never reached
                raise RuntimeError(f"{work.note.path}: about to upload a note that was not read")
            source_id, adopted = await self._add_part(work.note.path, part.text, part.title)
            ids.append(source_id)
            adopted_any = adopted_any or adopted
        return ids, adopted_any

    def _adoptable(self, path: str, candidates: Iterable[str]) -> str | None:
        """The first of `candidates` (ids of sources titled as a part of `path`) that is nlmsync's upload of
        this note: registered to `path`, or to nothing (and not a look-alike)."""
        for source_id in candidates:
            if source_id in self.remote.foreign:
                continue
            row = self.deps.store.mapping_by_source_id(self.deps.notebook_id, source_id)
            if row is None or row.path == path:
                return source_id
        return None

    async def _add_part(self, path: str, text: str, title: str) -> tuple[str, bool]:
        deps = self.deps
        existing = self._adoptable(path, self.remote.titled(title))
        if existing is not None:
            return existing, True
        async with self.semaphore:
            if self.fatal is not None:  # queued behind an upload that found the server unusable
                raise type(self.fatal)(f"not tried: {self.fatal}")
            try:
                added = await deps.client.source_add_text(deps.notebook_id, text, title,
                                                          wait=deps.settings.wait_for_processing)
            except ConnectionProblem:
                # The answer was lost: the listing says whether the add happened. Absent means it did
                # not, so one more add cannot duplicate; a source that appears later under the same
                # title is swept by `queue_duplicate_sources` on the next run.
                listing = await lookup_after_lost_answer(deps.client, deps.notebook_id)
                found = self._adoptable(path, [sid for sid, listed in listing.items() if listed == title])
                if found is not None:
                    self.remote.added(found, title)
                    return found, True
                added = await deps.client.source_add_text(deps.notebook_id, text, title,
                                                          wait=deps.settings.wait_for_processing)
        self.remote.added(added.source_id, title)
        return added.source_id, False

    def _commit(self, work: _Work, outcome: NoteOutcome) -> list[str]:
        """Record one note in one step (with the uses of the reused notes before it); returns the old source
        ids to delete best-effort afterwards."""
        store, nb, note, decision = self.deps.store, self.deps.notebook_id, work.note, work.decision
        retire: list[str] = []
        if decision.kind == "reuse" and not decision.canonicalize:
            self.unmarked.append(note.path)
            return retire
        with store.step():
            self._mark_reused()
            if decision.kind == "rename":
                store.rename_mapping(nb, decision.rename_from, note.path)
            elif decision.kind == "reuse":
                if decision.canonicalize:
                    self._write_rows(note, outcome.source_ids, replace_all=False)
            else:
                rows_before = len(store.mappings_by_path(nb, note.path))
                self._write_rows(note, outcome.source_ids, replace_all=rows_before > len(note.parts))
                new_ids = outcome.source_ids
                for i, old in enumerate(decision.prior_part_ids):
                    new = new_ids[min(i, len(new_ids) - 1)]
                    if old != new:
                        store.register_source_alias(old, new)
                retire = [sid for sid in decision.previous if sid not in new_ids]
                for sid in retire:
                    store.queue_deletion(nb, sid, f"replaced by a new version of {note.path}")
            store.mark_used(nb, [note.path])
        return retire

    def _write_rows(self, note: PreparedNote, ids: list[str], *, replace_all: bool) -> None:
        store, nb = self.deps.store, self.deps.notebook_id
        if replace_all:
            store.remove_mappings(nb, note.path)
        for part, source_id in zip(note.parts, ids):
            store.upsert_mapping(notebook_id=nb, path=note.path, part=part.index, part_count=len(note.parts),
                                 source_id=source_id, content_hash=part.content_hash, title=part.title,
                                 status="active", managed=True)

    async def _retitle_best_effort(self, work: _Work) -> None:
        """Give a rebound note's sources the title of its new path (`source_rename`), so NotebookLM shows
        where the note now lives. A failed rename changes nothing and never fails the note: the
        registry keeps the old title, so a later run sees the difference and tries again."""
        deps = self.deps
        store, nb = deps.store, deps.notebook_id
        for row, part in zip(store.mappings_by_path(nb, work.note.path), work.note.parts):
            if row.title == part.title:
                continue
            source_id = store.resolve_source_id(row.source_id)
            if self.remote.sources.get(source_id) != part.title:
                try:
                    await deps.client.source_rename(nb, source_id, part.title)
                except NotebookLMError:
                    continue
                self.remote.added(source_id, part.title)
            with store.step():
                store.upsert_mapping(row, source_id=source_id, title=part.title)

    async def _delete_best_effort(self, source_id: str) -> None:
        """Delete a replaced source; on any failure it stays queued for a later run."""
        deps = self.deps
        try:
            await strict_delete(deps.client, deps.notebook_id, self.remote, source_id)
        except NotebookLMError:
            return
        with deps.store.step():
            deps.store.deletion_done(deps.notebook_id, source_id)


async def queue_duplicate_sources(deps: SyncDeps, remote: RemoteView) -> int:
    """Queue for deletion every unregistered remote source that is a copy of a live registered one: titled
    exactly like it and holding its text (`identity`).

    Titles are unique to a path and its content, so such a source is a duplicate left by an add whose answer
    was lost and which landed after the run had looked for it. A source with the title but other text was
    added by someone else: it is marked foreign and left alone. Returns how many were queued (nothing is
    written when there are none).
    """
    store, nb = deps.store, deps.notebook_id
    registry = RegistryView.read(store, nb)
    live = {m.title: (m, resolved) for rows in registry.by_path.values() for m, resolved in rows
            if m.status == "active"}
    duplicates: list[tuple[str, str]] = []
    for source_id, title in list(remote.sources.items()):
        row, resolved = live.get(title, (None, source_id))
        if row is None or resolved == source_id or registry.row_of_source(source_id) is not None:
            continue
        if await holds_text(deps.client, source_id, _uploaded_text(deps, row), row.content_hash):
            duplicates.append((source_id, title))
        else:
            remote.foreign[source_id] = title
    if duplicates:
        with store.step():
            for source_id, title in duplicates:
                store.queue_deletion(nb, source_id, f"duplicate of {title}")
    return len(duplicates)


def _uploaded_text(deps: SyncDeps, row: Any) -> str | None:
    """The text nlmsync uploaded for a registry row: the note's part as it is now, when it still hashes the
    same; None when the note changed since (only the hash is known then)."""
    try:
        text = vault_files.read_note_text(deps.vault_root, row.path)
    except (InputError, OSError):
        return None
    parts = prepare_note(row.path, text, deps.max_words, deps.max_bytes).parts
    part = parts[row.part] if row.part < len(parts) else None
    return part.text if part is not None and part.content_hash == row.content_hash else None


async def retry_pending_deletions(deps: SyncDeps, remote: RemoteView) -> tuple[int, int]:
    """Retry the deletions earlier runs could not finish; returns (done, still pending).

    A queued source that is no longer listed is simply marked done, without a call.
    """
    store, nb = deps.store, deps.notebook_id
    done = left = 0
    for pending in store.pending_deletions(nb):
        source_id = pending.source_id
        if source_id in remote:
            try:
                await deps.client.source_delete(source_id)
            except NotFoundError:
                pass
            except FATAL_ERRORS:
                raise
            except NotebookLMError:
                left += 1
                continue
            remote.deleted(source_id)
        with store.step():
            store.deletion_done(nb, source_id)
        done += 1
    return done, left


async def ensure_sources_for_paths(deps: SyncDeps, paths: Sequence[str], remote: RemoteView, *,
                                   protect: set[str] | None = None, dry_run: bool = False,
                                   found: Collection[str] = (), mirror: MirrorScope | None = None) -> list[NoteOutcome]:
    """Make the notes at `paths` (vault-relative, normalized) live sources, in that order.

    Returns one outcome per path (reused, replaced, renamed, added, excluded or failed), with the
    evictions each note needed just before it. `protect` are paths never evicted by this call (the
    requested paths always are). With `dry_run`, nothing is written and no mutating call is made.
    `found` are the paths that came from walking the vault rather than from the user (see `load_notes`).
    With `mirror`, the registered notes in its scope that are neither among `paths` nor claimed by a
    rename of this run, or that are now excluded by configuration, have their sources removed first
    (`removed` outcomes, before the others): renames are matched by content hash before any removal is
    decided, so a moved note keeps its source.

    Raises:
        CapacityError: the requested notes alone exceed the capacity (before any upload), or no
            managed eviction candidate is left (after the notes before it were done and recorded).
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server
            cannot be used at all (what was done before is recorded).
        An error raised after some notes were handled carries their outcomes in `report` (a list).
    """
    unique = list(dict.fromkeys(paths))
    read: list[NoteHashes] = []
    items = load_notes(deps, unique, found, deps.store.note_hashes(unique), read)
    registry = RegistryView.read(deps.store, deps.notebook_id)
    decide_all(deps, [i for i in items if isinstance(i, _Work)], remote, registry)
    if read_for_upload(deps, items, found, read):
        decide_all(deps, [i for i in items if isinstance(i, _Work)], remote, registry)
    works = [i for i in items if isinstance(i, _Work)]
    await screen_title_matches(deps.client, lambda source_id: registry.row_of_source(source_id) is not None,
                               remote, {p.title: p.text for w in works for p in w.note.parts if p.text is not None})
    check_capacity_up_front(deps, works, remote, registry)
    protected = set(protect or ()) | set(paths)
    vanished = {} if mirror is None else vanished_paths(items, mirror, registry)
    removed = await remove_vanished(deps, remote, vanished, dry_run=dry_run)
    if dry_run:
        return removed + _simulate(deps, items, remote, protected)
    left = [*vanished, *(w.decision.rename_from for w in works if w.decision.rename_from is not None)]
    try:
        return removed + await _Runner(deps, remote, protected, read, left).run(items)
    except NlmsyncError as exc:
        exc.report = removed + (exc.report if isinstance(exc.report, list) else [])
        raise


def vanished_paths(items: list[_Work | NoteOutcome], scope: MirrorScope, registry: RegistryView) -> dict[str, str]:
    """The managed registered notes in `scope` whose sources a mirroring run removes, with the reason:
    not among the notes of the run and not the old path of one of its renames, or excluded by configuration."""
    requested = {i.note.path if isinstance(i, _Work) else i.path for i in items}
    renamed_from = {i.decision.rename_from for i in items if isinstance(i, _Work)}
    excluded = {i.path for i in items if isinstance(i, NoteOutcome) and i.branch == Branch.EXCLUDED
                and i.reason == EXCLUDED_BY_CONFIGURATION}
    gone: dict[str, str] = {}
    for path, rows in registry.by_path.items():
        if not any(m.managed for m, _ in rows) or path in renamed_from or not scope.covers(path):
            continue
        if path in excluded:
            gone[path] = EXCLUDED_BY_CONFIGURATION
        elif path not in requested:
            gone[path] = "no longer in the vault"
    return gone


async def remove_vanished(deps: SyncDeps, remote: RemoteView, vanished: dict[str, str], *,
                          dry_run: bool) -> list[NoteOutcome]:
    """Take out the sources of `vanished` paths (path -> reason), each with its registry rows in one step.

    Raises:
        NotebookLMError: a strict delete failed (what was removed before carries in `report`).
    """
    store, nb = deps.store, deps.notebook_id
    outcomes: list[NoteOutcome] = []
    for path, reason in vanished.items():
        if dry_run:
            ids = [store.resolve_source_id(m.source_id) for m in store.mappings_by_path(nb, path)]
            outcomes.append(NoteOutcome(path=path, branch=Branch.REMOVED, reason=reason,
                                        source_ids=[i for i in ids if i in remote]))
            continue
        try:
            outcome = await evict_path(deps.client, store, nb, remote, path, reason=reason, branch=Branch.REMOVED)
        except NlmsyncError as exc:
            exc.report = outcomes
            raise
        outcomes.append(outcome)
        deps.progress(outcome)
    return outcomes


def _simulate(deps: SyncDeps, items: list[_Work | NoteOutcome], remote: RemoteView,
              protect: set[str]) -> list[NoteOutcome]:
    outcomes: list[NoteOutcome] = []
    occupied = len(remote)
    exclude = set(protect)
    for item in items:
        if isinstance(item, NoteOutcome):
            outcomes.append(item)
            continue
        ids = list(item.decision.keep)
        if _needs_upload(item):
            needed = _slots_needed(item, remote)
            planned, occupied = plan_evictions(deps.store, deps.notebook_id, remote, occupied, needed,
                                               deps.settings.capacity, exclude)
            outcomes.extend(planned)
            occupied += needed - len(item.decision.previous)
            ids = [remote.find_title(p.title) or "" for p in item.note.parts]
        outcomes.append(_outcome(item, [i for i in ids if i], False))
    return outcomes
