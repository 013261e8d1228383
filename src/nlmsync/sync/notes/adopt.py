"""Levelling, for notes kept alone: a source the state file does not know, titled as a note's upload, is adopted when
it holds the note's text (or an older version of it, which the run replaces), deleted as a copy once proven, or
left alone as a look-alike (`settle_note_claims`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from nlmsync.store import ResolvedRow, SourceMapping
from nlmsync.sync.evidence import Evidence
from nlmsync.sync.registry import STALE_HASH
from nlmsync.sync.titles import NoteTitle


class NoteClaim(NamedTuple):
    """A listed source the state file does not know, titled as a note's upload (`title`, parsed: `shown`)."""

    source_id: str
    title: str
    shown: NoteTitle


async def settle_note_claims(evidence: Evidence, claims: Sequence[NoteClaim]) -> None:
    """Settle the unknown sources titled as a note's upload (see the module)."""
    store, nb, remote, done = evidence.deps.store, evidence.deps.notebook_id, evidence.remote, evidence.done
    for source_id, title, (shown, part, count, _) in claims:
        path = evidence.resolve(shown)
        if path is None:
            await evidence.proven(source_id, title)  # an upload of a note this vault does not have: left as it is
            continue
        if (pack := store.pack_members(nb, [path]).get(path)) is not None and pack[0] in remote:
            if await evidence.proven(source_id, title):  # the note is in a pack: this copy of it goes
                evidence.retire(source_id, f"{path} is in a pack")
            continue
        rows = {r.part: ResolvedRow(r, store.resolve_source_id(r.source_id)) for r in store.mappings_by_path(nb, path)}
        held = rows.get(part)
        live = held is not None and held.source_id in remote
        note = evidence.note(path)
        current = None
        if note is not None and len(note.parts) == count and part < count:
            candidate = note.parts[part]
            if title in candidate.titles():
                current = candidate
        if live and held is not None and (held.row.title == title or current is None):
            # the state file keeps a live source for this part: this one is a copy, or an older version
            if await evidence.proven(source_id, title, current.text if current is not None else None):
                evidence.retire(source_id, f"duplicate of {held.row.title}" if held.row.title == title
                                else f"an older version of {path}")
            continue
        if not await evidence.proven(source_id, title, current.text if current is not None else None):
            continue
        with store.step():
            if live and held is not None:  # another machine replaced it: this machine's goes
                store.queue_deletion(nb, held.source_id, f"replaced by another upload of {path}")
                store.register_source_alias(held.source_id, source_id)
                done.retired.append(held.source_id)
            store.upsert_mapping(SourceMapping(
                notebook_id=nb, path=path, part=part, part_count=count, source_id=source_id,
                content_hash=current.content_hash if current is not None else STALE_HASH, title=title))
        remote.added(source_id, title)
        done.notes.append(path)
