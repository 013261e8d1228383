"""`refresh --all [PATH…]`: which registered notes in the run's scope left the vault or became
excluded (`vanished_paths`, decided after renames are matched by content hash), and taking out their
sources (`remove_vanished`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from nlmsync.errors import NlmsyncError
from nlmsync.sync.decide import PlannedNote, RegistryView
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.eviction import evict_path
from nlmsync.sync.plan import Branch, PreparedNote
from nlmsync.sync.reconcile import RemoteView
from nlmsync.sync.report import NoteOutcome, stop_report
from nlmsync.vault import EXCLUSION_REASONS


@dataclass(frozen=True)
class AllNotesScope:
    """What a `refresh --all [PATH…]` run answers for: the registered notes under `roots`
    (vault-relative folders or notes; "" is the whole vault). Their sources are removed when the note
    left the vault or became excluded; registered notes outside the scope are left alone."""

    roots: tuple[str, ...] = ("",)

    def covers(self, path: str) -> bool:
        return any(root in ("", path) or path.startswith(root.rstrip("/") + "/") for root in self.roots)


def vanished_paths(items: Sequence[PlannedNote | PreparedNote | NoteOutcome], scope: AllNotesScope,
                   registry: RegistryView, packed: Collection[str] = ()) -> dict[str, str]:
    """The managed registered notes in `scope` whose sources an `--all` run removes, with the reason:
    not among the notes of the run (`items`, and the notes going into packs, `packed`) and not the old path
    of one of its renames, or now excluded (the reason says how)."""
    requested = {i.note.path if isinstance(i, PlannedNote) else i.path for i in items} | set(packed)
    renamed_from = {i.decision.rename_from for i in items if isinstance(i, PlannedNote)}
    excluded = {i.path: i.reason for i in items if isinstance(i, NoteOutcome) and i.branch == Branch.EXCLUDED
                and i.reason in EXCLUSION_REASONS}
    gone: dict[str, str] = {}
    for path, rows in registry.by_path.items():
        if not any(m.managed for m, _ in rows) or path in renamed_from or not scope.covers(path):
            continue
        if path in excluded:
            gone[path] = excluded[path]
        elif path not in requested:
            gone[path] = "no longer in the vault"
    return gone


async def remove_vanished(deps: SyncDeps, remote: RemoteView, vanished: dict[str, str], *,
                          dry_run: bool) -> list[NoteOutcome]:
    """Take out the sources of `vanished` paths (path -> reason), each with its registry rows in one step; a
    source whose delete the server refuses is queued for later runs, and the run goes on.

    Raises:
        NotebookLMError: the server cannot be used (what was removed before is in its `report`,
            `report.notes_done`).
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
            outcome = await evict_path(deps.client, store, nb, remote, path, reason=reason, branch=Branch.REMOVED,
                                       queue_refused=True)
        except NlmsyncError as exc:
            stop_report(exc, nb, outcomes)
            raise
        outcomes.append(outcome)
        deps.progress(outcome)
    return outcomes
