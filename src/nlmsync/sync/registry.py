"""The registry as a run reads it: the notebook's source mappings read once, each with its source id resolved
through the alias chain (`RegistryView`), what the state file accounts for beside them, and which registered
paths a `refresh --all` finds gone (`vanished_paths`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from nlmsync import vault as vault_files
from nlmsync.errors import InputError
from nlmsync.store import ResolvedRow
from nlmsync.sync.branches import Branch, Decision, decide_branch
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.titles import looks_managed

if TYPE_CHECKING:
    from collections.abc import Iterable

    from nlmsync.store import SourceMapping, StateStore
    from nlmsync.sync.remote import RemoteView

STALE_HASH = ""
"""The hash recorded for a note held by a source adopted at an older version: it never equals a text's, so the
run that reaches the note replaces the source."""

FEW_PATHS = 200
"""A run of up to this many notes reads the mappings it looks at (`RegistryView.read` with `paths`); more, and
it reads the notebook's whole registry at once."""
@dataclass(frozen=True)
class ResolvedMapping:
    """A source mapping (one registry row) as the decision needs it: `source_id` already resolved through the
    alias chain, `stored_source_id` as the row holds it."""

    part: int
    source_id: str
    content_hash: str
    stored_source_id: str


@dataclass
class RegistryView:
    """The notebook's source mappings as a run finds them, read once (`StateStore.mappings_with_resolved_ids`),
    so deciding N notes' branches costs one query, not a few per note; or, for a run of a few notes (`ask` on
    a vault of 10,000), only the mappings it looks at, each read on first use. Its lookups are named as the
    store's."""

    store: StateStore
    notebook_id: str
    by_path: dict[str, list[ResolvedRow]] = field(default_factory=dict)
    by_source: dict[str, SourceMapping] = field(default_factory=dict)
    complete: bool = False
    """Whether `by_path` and `by_source` hold the whole registry (else they are filled as paths are looked up)."""
    _by_hash: dict[str, list[SourceMapping]] | None = field(default=None, repr=False)

    def preload(self, paths: Collection[str] | None = None) -> None:
        """Read the registry for a run: all of it, or with a few `paths` (at most `FEW_PATHS`) theirs for now."""
        if paths is not None and len(paths) <= FEW_PATHS:
            for path in paths:
                self.mappings(path)
            return
        self.read_all()

    def read_all(self) -> None:
        """Read the whole registry (once)."""
        if self.complete:
            return
        self.by_path, self.by_source, self._by_hash = {}, {}, None
        for resolved_row in self.store.mappings_with_resolved_ids(self.notebook_id):
            row, resolved = resolved_row
            self.by_path.setdefault(row.path, []).append(resolved_row)
            held = self.by_source.get(resolved)
            if held is None or (held.source_id != resolved and row.source_id == resolved):
                self.by_source[resolved] = row
        self.complete = True

    def rows(self) -> Iterable[ResolvedRow]:
        """Every mapping read so far, with its source id resolved (all of them once `complete`)."""
        return (row for rows in self.by_path.values() for row in rows)

    def mappings(self, path: str) -> list[ResolvedRow]:
        """The mappings of `path` by part, each with its source id resolved (read now if not read yet)."""
        rows = self.by_path.get(path)
        if rows is None:
            if self.complete:
                return []
            rows = [ResolvedRow(m, self.store.resolve_source_id(m.source_id))
                    for m in self.store.mappings_by_path(self.notebook_id, path)]
            self.by_path[path] = rows
        return rows

    def resolved_mappings(self, path: str) -> list[ResolvedMapping]:
        """The mappings of `path`, ordered by part, with their source ids resolved."""
        return [ResolvedMapping(r.part, resolved, r.content_hash, r.source_id) for r, resolved in self.mappings(path)]

    def mappings_by_hash(self, content_hash: str) -> list[SourceMapping]:
        """The rows whose uploaded content has `content_hash` (as `StateStore.mappings_by_hash`), from the whole
        registry when it was read, else from the store."""
        if not self.complete:
            return self.store.mappings_by_hash(self.notebook_id, content_hash)
        if self._by_hash is None:
            self._by_hash = {}
            for rows in self.by_path.values():
                for row, _ in rows:
                    self._by_hash.setdefault(row.content_hash, []).append(row)
            for found in self._by_hash.values():
                found.sort(key=lambda r: (r.path, r.part))
        return self._by_hash.get(content_hash, [])

    def mapping_by_source_id(self, source_id: str) -> SourceMapping | None:
        """The mapping holding `source_id` or an id on its alias chain (as `StateStore.mapping_by_source_id`)."""
        if not self.complete:
            return self.store.mapping_by_source_id(self.notebook_id, source_id)
        row = self.by_source.get(source_id)
        if row is None:
            resolved = self.store.resolve_source_id(source_id)
            row = self.by_source.get(resolved) if resolved != source_id else None
        return row


def accounted_ids(store: StateStore, notebook_id: str, resolved: Iterable[ResolvedRow] | None = None) -> set[str]:
    """The source ids the state file accounts for in `notebook_id`: its packs, the sources waiting to be deleted,
    and each mapping's source id with the id its alias chain resolves to (`resolved`: the notebook's
    `StateStore.mappings_with_resolved_ids`, when the caller has read them already)."""
    ids = {p.source_id for p in store.packs(notebook_id)}
    ids.update(p.source_id for p in store.pending_deletions(notebook_id))
    for mapping, source_id in store.mappings_with_resolved_ids(notebook_id) if resolved is None else resolved:
        ids.update((mapping.source_id, source_id))
    return ids


def orphan_ids(remote: RemoteView, registered_ids: set[str]) -> list[str]:
    """Remote sources carrying an nlmsync title that no registry row or alias accounts for (`accounted_ids`),
    less the look-alikes (`remote.foreign`: titled like nlmsync's, holding other text)."""
    return sorted(i for i, t in remote.sources.items()
                  if i not in registered_ids and i not in remote.foreign and looks_managed(t))


def untouchable_count(remote: RemoteView, registry: RegistryView, own_titles: Collection[str]) -> int:
    """The listed sources no eviction may take: neither a managed single-note source nor titled as one of
    `own_titles` (the run's own uploads, adopted rather than added) — hand-added sources, look-alikes, packs."""
    registry.read_all()
    untouchable = 0
    for source_id, title in remote.sources.items():
        if title in own_titles and source_id not in remote.foreign:
            continue
        row = registry.mapping_by_source_id(source_id)
        if row is None or not row.managed:
            untouchable += 1
    return untouchable


def rename_candidates(registry: RegistryView, content_hash: str, vault_root: Path,
                      passed_over: Collection[str]) -> list[tuple[str, list[ResolvedMapping]]]:
    """The vanished paths a file (note or attachment) whose first part hashes to `content_hash` may have been
    renamed from, each once with its mappings: registered with that hash, not in the vault any more, and not one of
    `passed_over` (the run's own paths, and the paths other renames of the run claimed)."""
    candidates: list[tuple[str, list[ResolvedMapping]]] = []
    seen: set[str] = set()
    for row in registry.mappings_by_hash(content_hash):
        old = row.path
        if old in seen or old in passed_over or _exists(vault_root, old):
            continue
        seen.add(old)
        candidates.append((old, registry.resolved_mappings(old)))
    return candidates


def _exists(root: Path, rel_path: str) -> bool:
    try:
        return vault_files.resolve_in_vault(root, rel_path).is_file()
    except InputError:
        return False


def decide_in_order(wanted: Sequence[tuple[str, Sequence[str]]], remote_ids: Collection[str],
                    registry: RegistryView, vault_root: Path, taken: Collection[str] = ()) -> list[Decision]:
    """The branch of each (path, part hashes) of `wanted`, in order (`branches.decide_branch` over the path's
    mappings); a vanished path is claimed by at most one rename, and never by a path of `wanted` itself nor of
    `taken` (the run's other paths, decided apart)."""
    requested = {path for path, _ in wanted}
    requested.update(taken)
    claimed: set[str] = set()
    decisions: list[Decision] = []
    for path, hashes in wanted:
        current = registry.resolved_mappings(path)
        candidates = [] if any(p.source_id in remote_ids for p in current) else \
            rename_candidates(registry, hashes[0], vault_root, claimed | requested)
        decision = decide_branch(hashes, current, remote_ids, candidates)
        if decision.rename_from is not None:
            claimed.add(decision.rename_from)
        decisions.append(decision)
    return decisions


LEFT_VAULT = "no longer in the vault"
NOT_SYNCED_KIND = "no longer synced: the 'attachments' setting leaves out its kind"


class _Named(Protocol):
    @property
    def path(self) -> str: ...


class _Scope(Protocol):
    """What a `refresh --all` answers for (`run.AllNotesScope`)."""

    def covers(self, path: str) -> bool: ...


def vanished_paths(scope: _Scope, registry: RegistryView, items: Sequence[_Named | NoteOutcome],
                   kept: Collection[str] = (), renamed_from: Collection[str | None] = (),
                   synced_suffixes: Collection[str] | None = None) -> dict[str, str]:
    """The managed registered notes in `scope` whose sources an `--all` run removes, with the reason: not among
    the notes of the run (`items`, and the notes it keeps in packs, `kept`) and not the old path of one of its
    renames (`renamed_from`), or now excluded (the reason says how). With `synced_suffixes` (the extensions of
    the attachment kinds the `attachments` setting takes), an attachment of another kind is said to be no longer
    synced because of the setting, not to have left the vault."""
    requested = {i.path for i in items} | set(kept)
    renamed = set(renamed_from)
    excluded = {i.path: i.reason for i in items if isinstance(i, NoteOutcome) and i.branch == Branch.EXCLUDED
                and i.reason in vault_files.EXCLUSION_REASONS}
    gone: dict[str, str] = {}
    for path, rows in registry.by_path.items():
        if not any(m.managed for m, _ in rows) or path in renamed or not scope.covers(path):
            continue
        if path in excluded:
            gone[path] = excluded[path]
        elif path not in requested:
            dropped = synced_suffixes is not None and not vault_files.is_note_path(path) \
                and vault_files.suffix_of(path) not in synced_suffixes
            gone[path] = NOT_SYNCED_KIND if dropped else LEFT_VAULT
    return gone
