"""What `status` reports: the registry against a fresh listing of the notebook and the vault, with the next
steps (`status_report`), and where one note is (`note_placement`: in a pack, alone — its own source, or its
parts —, missing because its source is gone from the notebook, or never synced, and why: no such note, excluded,
…). Reads; changes nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from nlmsync.app.messages import next_steps
from nlmsync.app.results import (
    EvictionCandidate,
    EvictionEntry,
    LocalChangeEntry,
    NotePlacement,
    PackEntry,
    SourceMappingEntry,
    StatusReport,
)
from nlmsync.config import Settings
from nlmsync.notebooklm import Usage
from nlmsync.store import StateStore
from nlmsync.store.document_texts import DocumentTexts
from nlmsync.sync import (
    Capacity,
    RemoteView,
    accounted_ids,
    local_changes,
    orphan_ids,
    parse_title,
    sources_layout,
    synced_hashes,
)
from nlmsync.text import admit_note
from nlmsync.vault import EXCLUSION_REASONS, attachment_kind, normalize_rel_path, resolve_in_vault

__all__ = ["NEXT_EVICTIONS_SHOWN", "note_placement", "status_report"]

NEXT_EVICTIONS_SHOWN = 5


def status_report(store: StateStore, settings: Settings, notebook_id: str, remote: RemoteView, *,
                  limit: Capacity, plan: str | None, allowance: Usage | None,
                  paths: Sequence[str] = ()) -> StatusReport:
    """The notebook `remote` lists against the state file and the vault: its sources as the registry maps them
    (active, stale, orphans, added by hand), the notes changed since they were synced, the next evictions, what
    waits to be deleted, and the next steps; for each of `paths` (vault-relative notes) the source that holds it."""
    vault_root = Path(settings.vault)
    report = StatusReport(server=settings.server, notebook_id=notebook_id, title=remote.title,
                          capacity=limit.value, capacity_source=limit.source, plan=plan, allowance=allowance,
                          source_count=len(remote), layout=sources_layout(store, notebook_id, remote))
    packs = store.packs(notebook_id)
    report.packs = [PackEntry(title=p.title, source_id=p.source_id, first_path=p.first_path,
                              last_path=p.last_path, note_count=p.note_count, byte_count=p.size,
                              live=p.source_id in remote) for p in packs]
    report.notes = [note_placement(store, notebook_id, normalize_rel_path(path), remote, vault_root,
                                   settings.exclude) for path in paths]
    resolved_mappings = store.mappings_with_resolved_ids(notebook_id)
    mappings = [m for m, _ in resolved_mappings]
    for m, resolved in resolved_mappings:
        attachment = attachment_kind(m.path) is not None
        entry = SourceMappingEntry(path=m.path, part=m.part, part_count=m.part_count, source_id=resolved,
                                   title=m.title, managed=m.managed, kind="attachment" if attachment else "note")
        (report.active_sources if resolved in remote else report.stale_sources).append(entry)
        if attachment and resolved in remote:
            report.attachment_count += 1
            report.attachment_bytes += file_size(vault_root, m.path)
    registered = accounted_ids(store, notebook_id, resolved_mappings)
    report.orphan_source_ids = orphan_ids(remote, registered)
    report.unmanaged_count = sum(1 for i in remote.sources
                                 if i not in registered and i not in report.orphan_source_ids)
    synced = synced_hashes(mappings, store.pack_members(notebook_id))
    texts = DocumentTexts(store.db.conn)
    report.local_changes = [
        LocalChangeEntry(path=c.path, change=c.change.value, renamed_to=c.renamed_to, command=c.command)
        for c in local_changes(vault_root, synced, settings.exclude, store.note_hashes(synced),
                               packed=bool(packs), files=texts.recorded(), texts=texts.get,
                               limits=(settings.source_max_words, settings.source_max_bytes))]
    used = {m.path: m for m in mappings}
    report.next_evictions = [
        EvictionCandidate(path=e.path, use_count=used[e.path].use_count if e.path in used else e.uses,
                          last_used=used[e.path].last_used if e.path in used else None)
        for e in store.eviction_queue(notebook_id)[:NEXT_EVICTIONS_SHOWN]]
    report.pending_deletions = [p.source_id for p in store.pending_deletions(notebook_id)]
    report.recent_evictions = [EvictionEntry(path=e.path, source_id=e.source_id, reason=e.reason,
                                             evicted_at=e.evicted_at)
                               for e in store.recent_evictions(notebook_id, 10)]
    orphan_paths = [parsed[0] for i in report.orphan_source_ids
                    if (parsed := parse_title(remote.sources[i])) is not None and (vault_root / parsed[0]).is_file()]
    report.next_steps = next_steps(report, orphan_paths)
    return report


def file_size(vault_root: Path, path: str) -> int:
    """The size of the vault's file at `path` (0 when it is gone)."""
    try:
        return (vault_root / path).stat().st_size
    except OSError:
        return 0


def note_placement(store: StateStore, notebook_id: str, path: str, remote: RemoteView, vault_root: Path,
                   exclude: Sequence[str]) -> NotePlacement:
    """Where the note at `path` is in the notebook `remote` lists: in a pack, alone, or not in it (and then why,
    as `refresh PATH` would find it: no such note, excluded by `exclude` or its front matter, …)."""
    held = store.pack_members(notebook_id, [path]).get(path)
    if held is not None:
        pack = store.pack_by_source_id(notebook_id, held[0])
        return NotePlacement(path=path, where="pack" if held[0] in remote else "missing", source_ids=[held[0]],
                             pack=pack.title if pack else None)
    rows = store.mappings_by_path(notebook_id, path)
    if not rows:
        return _never_synced(vault_root, path, exclude)
    ids = [store.resolve_source_id(r.source_id) for r in rows]
    return NotePlacement(path=path, where="alone" if all(i in remote for i in ids) else "missing", source_ids=ids)


def _never_synced(vault_root: Path, path: str, exclude: Sequence[str]) -> NotePlacement:
    """A path the state file holds no source for, placed by the rule every run takes notes by (`admit_note`)."""
    full = resolve_in_vault(vault_root, path)
    if full.is_dir():
        return NotePlacement(path=path, where="folder")
    if not full.is_file():
        return NotePlacement(path=path, where="no such note")
    refused = admit_note(vault_root, path, exclude).refused
    if refused in EXCLUSION_REASONS:
        return NotePlacement(path=path, where="excluded", reason=refused)
    return NotePlacement(path=path, where="not synced", reason=refused)
