"""The notebook is the truth: the state file levelled with what the notebook holds before a run plans anything
(`level_with_notebook`). Each listed source the state file does not know is claimed by the kind of unit its title
names, and settled by what the vault and the source prove (`evidence.Evidence`); nothing nlmsync cannot prove its
own is ever deleted."""

from __future__ import annotations

from nlmsync.sync.attachments.adopt import FileClaim, file_claim, settle_file_claims
from nlmsync.sync.evidence import Evidence
from nlmsync.sync.notes.adopt import NoteClaim, settle_note_claims
from nlmsync.sync.packs.adopt import PackClaim, PackClaims
from nlmsync.sync.registry import STALE_HASH
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import Levelled
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import parse_note_title, parse_pack_title


def lookalike_notice(source_id: str, title: str) -> str:
    """The report line for a look-alike left alone."""
    return (f"source {source_id} is titled like an nlmsync upload ({title}) but does not hold that text; "
            "left alone as unmanaged")


async def level_with_notebook(deps: SyncDeps, remote: RemoteView) -> Levelled:
    """Settle the listed sources the state file does not know (see the module), recording what it adopts and
    queueing what it deletes (the run's pending deletions delete them). Costs nothing when every listed source
    titled as nlmsync's is known: the usual run of a machine that keeps its state file.

    Raises:
        AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError: reading a source back found
            the server unusable.
    """
    store, nb = deps.store, deps.notebook_id
    done = Levelled()
    unmanaged = store.unmanaged_sources(nb)
    for source_id, title in unmanaged.items():
        if remote.sources.get(source_id) == title:
            remote.foreign[source_id] = title
    known = store.mapped_source_ids(nb)
    records = store.packs(nb)
    known.update(r.source_id for r in records)
    known.update(p.source_id for p in store.pending_deletions(nb))
    notes: list[NoteClaim] = []
    packs: list[PackClaim] = []
    files: list[FileClaim] = []
    for source_id, title in remote.sources.items():
        if source_id in known or source_id in remote.foreign:
            continue
        if store.mapping_by_source_id(nb, source_id) is not None:  # a row holds it through an alias
            continue
        if (pack := parse_pack_title(title)) is not None:
            packs.append(PackClaim(source_id, title, pack))
        elif (file := file_claim(source_id, title)) is not None:
            files.append(file)
        elif (note := parse_note_title(title)) is not None:
            notes.append(NoteClaim(source_id, title, note))
    stale = any(r.content_hash == STALE_HASH and r.source_id in remote for r in records)
    if not notes and not packs and not files and not stale:
        forget_dead_packs(deps, remote)
        return done
    evidence = Evidence(deps, remote, done)
    if packs or stale:
        await PackClaims(evidence).settle(packs, records)
    await settle_note_claims(evidence, notes)
    if files:
        await settle_file_claims(evidence, files)
    gone = {sid: t for sid, t in unmanaged.items() if sid not in remote.sources}
    store.record_unmanaged(nb, done.lookalikes)
    if gone:
        store.forget_unmanaged(nb, gone)
    forget_dead_packs(deps, remote)
    return done


def forget_dead_packs(deps: SyncDeps, remote: RemoteView) -> None:
    """Forget the records of packs the notebook no longer holds once none of their notes is missing: each note
    they still hold is held by a live pack (levelling moved it there) or has left the vault — what a state file
    older than the notebook keeps (restored from a backup, or left while another device replaced the pack). A
    dead pack still holding notes of the vault is a pack deleted in NotebookLM, kept so that `status` says so and
    `refresh` uploads its notes again."""
    store, nb = deps.store, deps.notebook_id
    dead = [r for r in store.packs(nb) if r.source_id not in remote]
    if not dead:
        return
    with store.step():
        for record in dead:
            held = store.notes_of_pack(nb, record.source_id)
            if not any((deps.vault_root / path).is_file() for path, _ in held):
                store.remove_pack(nb, record.source_id)
