"""`refresh --all [PATH…]`: the registered notes in the run's scope that left the vault or became excluded
(`vanished_paths`, decided after renames are matched by content hash), and taking out their sources
(`remove_vanished`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Protocol

from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.eviction import evict_path
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, RefreshReport
from nlmsync.sync.run import AllNotesScope
from nlmsync.vault import EXCLUSION_REASONS, is_note_path, suffix_of

LEFT_VAULT = "no longer in the vault"
NOT_SYNCED_KIND = "no longer synced: the 'attachments' setting leaves out its kind"


class _Named(Protocol):
    @property
    def path(self) -> str: ...


def vanished_paths(scope: AllNotesScope, registry: RegistryView, items: Sequence[_Named | NoteOutcome],
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
                and i.reason in EXCLUSION_REASONS}
    gone: dict[str, str] = {}
    for path, rows in registry.by_path.items():
        if not any(m.managed for m, _ in rows) or path in renamed or not scope.covers(path):
            continue
        if path in excluded:
            gone[path] = excluded[path]
        elif path not in requested:
            dropped = synced_suffixes is not None and not is_note_path(path) and suffix_of(path) not in synced_suffixes
            gone[path] = NOT_SYNCED_KIND if dropped else LEFT_VAULT
    return gone


async def remove_vanished(deps: SyncDeps, remote: RemoteView, vanished: dict[str, str], report: RefreshReport, *,
                          dry_run: bool) -> None:
    """Take out the sources of `vanished` paths (path -> reason), each with its registry rows in one step, into
    `report`; a source whose delete the server refuses is queued for later runs, and the run goes on.

    Raises:
        NotebookLMError: the server cannot be used (what was removed before is in `report`).
    """
    store, nb = deps.store, deps.notebook_id
    for path, reason in vanished.items():
        if dry_run:
            ids = [store.resolve_source_id(m.source_id) for m in store.mappings_by_path(nb, path)]
            report.notes.append(NoteOutcome(path=path, branch=Branch.REMOVED, reason=reason,
                                            source_ids=[i for i in ids if i in remote]))
            continue
        outcome = await evict_path(deps, remote, path, reason=reason, branch=Branch.REMOVED, queue_refused=True)
        report.notes.append(outcome)
        deps.progress(outcome)
