"""The notebook is the truth: level the state file with what the notebook holds before a run plans anything.

The state file is a cache of the notebook. A fresh machine or CI runner has none, a file-sync tool brings in
another device's, a killed run leaves an upload unrecorded: then the notebook holds sources the state file
does not know. `level_with_notebook` runs after the run's one listing of the notebook and settles each of them:

- **A note's upload** (`notes/a.md · 3f9a12c0`, `notes/a.md (part 2/3) · …`): when its title is the one the
  note's text has now, it is read back and, holding that text, adopted as the note's source (a source titled
  so over other text is a look-alike someone added: left alone, and remembered so it is read once). An older
  version of the note, proven nlmsync's by what it holds (its words hash to its title's hash), is adopted too,
  as a source the run replaces; a copy of a source the state file keeps (an add whose answer was lost and
  which landed late) is deleted once proven.
- **A pack** (`a.md … z.md (130 notes) · 3f9a12c0`): its title carries its first and last note, how many it
  holds and the hash of its words, so when the vault's notes in that range, packed as nlmsync packs them, give
  that very title, it is adopted without reading it: no upload and no read for a notebook equal to the vault.
  The text of a pack adopted by its title alone is read back before nlmsync ever deletes it (`packs.proven`).
  Otherwise it is read: proven nlmsync's, it is adopted as holding the vault's notes of its range at other
  versions, and the run replaces it like any pack whose notes changed.
- Packs that hold the same notes (a pack another device replaced and had not deleted yet, an upload a killed
  run left behind) are settled by rank: a pack that holds the vault's notes exactly, then the packs the state
  file knows, then older ones. Each takes the notes of its range that no pack before it took; one left with
  none is deleted (once proven); one left with fewer notes than it holds is laid out again by the run.

Nothing nlmsync cannot prove its own is ever deleted: a source it recorded, or one whose text it read back.
What is not titled as nlmsync titles its uploads is the user's, and is only counted against the capacity.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field

from nlmsync import vault as vault_files
from nlmsync.store import NoteHashes, PackRecord, SourceMapping
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.packs.plan import pack_limit
from nlmsync.sync.packs.text import block_size, compose_pack
from nlmsync.sync.prepared import PreparedNote, load_notes
from nlmsync.sync.registry import STALE_HASH
from nlmsync.sync.remote import RemoteView, read_back
from nlmsync.sync.titles import (
    content_hash,
    pack_title,
    parse_note_title,
    parse_pack_title,
    shown_path_matches,
    title_hash,
)


def lookalike_notice(source_id: str, title: str) -> str:
    """The report line for a look-alike left alone."""
    return (f"source {source_id} is titled like an nlmsync upload ({title}) but does not hold that text; "
            "left alone as unmanaged")


@dataclass
class Levelled:
    """What levelling did: the notes and packs adopted, the sources queued for deletion and the look-alikes."""

    notes: list[str] = field(default_factory=list)
    packs: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    lookalikes: dict[str, str] = field(default_factory=dict)

    def notice(self) -> str | None:
        """What a run says of it (None when levelling found nothing to adopt or delete)."""
        said = []
        adopted = len(self.notes) + len(self.packs)
        if adopted:
            what = [f"{len(self.packs)} {'pack' if len(self.packs) == 1 else 'packs'}" if self.packs else "",
                    f"{len(set(self.notes))} {'note' if len(set(self.notes)) == 1 else 'notes'}" if self.notes else ""]
            said.append(f"adopted {adopted} {'source' if adopted == 1 else 'sources'} the state file did not know "
                        f"(uploaded by another machine or an interrupted run): {', '.join(w for w in what if w)}")
        if self.retired:
            n = len(self.retired)
            said.append(f"{n} {'copy' if n == 1 else 'copies'} of what the notebook holds elsewhere "
                        f"{'is' if n == 1 else 'are'} deleted")
        return "; ".join(said) or None


@dataclass
class _PackCandidate:
    """A pack that may keep notes: a listed pack the state file knows, or one it does not (a claim)."""

    source_id: str
    title: str
    first: str
    last: str
    count: int
    rank: int
    """0: holds the vault's notes exactly; 1: the state file's; 2: an older version, proven; 3: a copy of one of
    the state file's."""
    notes: list[tuple[str, str]]
    """(path, note hash) of the notes of its range, in order (the hash `STALE_HASH` for an older version)."""
    content_hash: str = STALE_HASH
    size: int = 0
    proven: bool = True
    registered: bool = False


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
    notes: list[tuple[str, str, tuple[str, int, int, str]]] = []
    packs: list[tuple[str, str, tuple[str, str, int, str]]] = []
    for source_id, title in remote.sources.items():
        if source_id in known or source_id in remote.foreign:
            continue
        if store.mapping_by_source_id(nb, source_id) is not None:  # a row holds it through an alias
            continue
        if (pack := parse_pack_title(title)) is not None:
            packs.append((source_id, title, pack))
        elif (note := parse_note_title(title)) is not None:
            notes.append((source_id, title, note))
    stale = any(r.content_hash == STALE_HASH and r.source_id in remote for r in records)
    if not notes and not packs and not stale:
        return done
    levelling = _Levelling(deps, remote, done)
    if packs or stale:
        await levelling.packs(packs, records)
    await levelling.notes(notes)
    gone = {sid: t for sid, t in unmanaged.items() if sid not in remote.sources}
    store.record_unmanaged(nb, done.lookalikes)
    if gone:
        store.forget_unmanaged(nb, gone)
    return done


class _Levelling:
    def __init__(self, deps: SyncDeps, remote: RemoteView, done: Levelled) -> None:
        self.deps = deps
        self.remote = remote
        self.done = done
        self._vault: list[str] | None = None
        self._stats: dict[str, tuple[int, int]] = {}
        self._notes: dict[str, PreparedNote | None] = {}
        self._legacy_refused: set[tuple[str, str]] = set()

    # --- reading the vault and the server ----------------------------------------------------------
    def _vault_paths(self) -> list[str]:
        """The vault's notes, sorted (walked once, when a pack or a shortened title needs them)."""
        if self._vault is None:
            listing = vault_files.list_vault(self.deps.vault_root)
            self._stats = {p: (m, s) for p, m, s in zip(listing.paths, listing.mtimes, listing.sizes, strict=True)}
            self._vault = sorted(listing.paths)
        return self._vault

    def _resolve(self, shown: str) -> str | None:
        """The vault path a title shows (a long one shortened to its end), None when the vault has none."""
        if not shown.startswith("…"):
            return shown
        found = [p for p in self._vault_paths() if shown_path_matches(shown, p)]
        return found[0] if len(found) == 1 else None

    def _load(self, paths: Sequence[str]) -> None:
        """Read the notes of `paths` not read yet (a note excluded, empty or unreadable becomes None), recording
        what each hashes to, so the run does not read them again."""
        wanted = [p for p in dict.fromkeys(paths) if p not in self._notes]
        if not wanted:
            return
        read: list[NoteHashes] = []
        items = load_notes(self.deps, wanted, set(wanted), None, read, self._stats or None)
        for path, item in zip(wanted, items, strict=True):
            self._notes[path] = item if isinstance(item, PreparedNote) else None
        self.deps.store.record_note_hashes(read)

    def _note(self, path: str) -> PreparedNote | None:
        self._load([path])
        return self._notes[path]

    async def _proven(self, source_id: str, title: str, text: str | None = None) -> bool | None:
        verdict = await read_back(self.deps.client, source_id, title, text)
        if verdict is False:
            self.done.lookalikes[source_id] = title
            self.remote.foreign[source_id] = title
        return verdict

    def _retire(self, source_id: str, reason: str) -> None:
        with self.deps.store.step():
            self.deps.store.queue_deletion(self.deps.notebook_id, source_id, reason)
        self.done.retired.append(source_id)

    # --- notes alone ---------------------------------------------------------------------------------
    async def notes(self, claims: list[tuple[str, str, tuple[str, int, int, str]]]) -> None:
        """Settle the unknown sources titled as a note's upload (see the module)."""
        store, nb = self.deps.store, self.deps.notebook_id
        for source_id, title, (shown, part, count, _) in claims:
            path = self._resolve(shown)
            if path is None:
                await self._proven(source_id, title)  # an upload of a note this vault does not have: left as it is
                continue
            if (pack := store.pack_members(nb, [path]).get(path)) is not None and pack[0] in self.remote:
                if await self._proven(source_id, title):  # the note is in a pack: this copy of it goes
                    self._retire(source_id, f"{path} is in a pack")
                continue
            rows = {r.part: (r, store.resolve_source_id(r.source_id)) for r in store.mappings_by_path(nb, path)}
            held = rows.get(part)
            live = held is not None and held[1] in self.remote
            note = self._note(path)
            current = None
            if note is not None and len(note.parts) == count and part < count:
                candidate = note.parts[part]
                if title in candidate.titles():
                    current = candidate
            if live and held is not None and (held[0].title == title or current is None):
                # the state file keeps a live source for this part: this one is a copy, or an older version
                if await self._proven(source_id, title, current.text if current is not None else None):
                    self._retire(source_id, f"duplicate of {held[0].title}" if held[0].title == title
                                 else f"an older version of {path}")
                continue
            if not await self._proven(source_id, title, current.text if current is not None else None):
                continue
            with store.step():
                if live and held is not None:  # another machine replaced it: this machine's goes
                    store.queue_deletion(nb, held[1], f"replaced by another upload of {path}")
                    store.register_source_alias(held[1], source_id)
                    self.done.retired.append(held[1])
                store.upsert_mapping(SourceMapping(
                    notebook_id=nb, path=path, part=part, part_count=count, source_id=source_id,
                    content_hash=current.content_hash if current is not None else STALE_HASH, title=title))
            self.remote.added(source_id, title)
            self.done.notes.append(path)

    # --- packs -----------------------------------------------------------------------------------------
    async def packs(self, claims: list[tuple[str, str, tuple[str, str, int, str]]], records: list[PackRecord]) -> None:
        """Settle the unknown sources titled as a pack, and the packs the state file took at an older version of
        their notes (see the module)."""
        store, nb = self.deps.store, self.deps.notebook_id
        candidates: list[_PackCandidate] = []
        members = store.pack_members(nb)
        held: dict[str, list[tuple[str, str]]] = {}
        for path, (source_id, note_hash) in sorted(members.items()):
            held.setdefault(source_id, []).append((path, note_hash))
        for record in records:
            if record.source_id not in self.remote:
                continue
            if record.content_hash == STALE_HASH and (current := await self._current(record.title)) is not None:
                current.source_id, current.registered, current.proven = record.source_id, True, record.proven
                candidates.append(current)  # the vault caught up with it: it holds the notes as they are
                continue
            candidates.append(_PackCandidate(record.source_id, record.title, record.first_path, record.last_path,
                                             record.note_count, 1, held.get(record.source_id, []),
                                             record.content_hash, record.size, record.proven, registered=True))
        registered_titles = {c.title for c in candidates}
        for source_id, title, (shown_first, shown_last, count, _) in claims:
            if title in registered_titles:  # a copy of a pack the state file keeps (an add whose answer was lost)
                candidates.append(_PackCandidate(source_id, title, shown_first, shown_last, count, 3, [],
                                                 proven=False))
                continue
            current = await self._current(title, source_id)
            if current is not None:
                candidates.append(current)
                continue
            if current is None and (title, source_id) in self._legacy_refused:
                continue
            if not await self._proven(source_id, title):
                continue
            first, last = self._resolve(shown_first) or shown_first, self._resolve(shown_last) or shown_last
            candidates.append(_PackCandidate(source_id, title, first, last, count, 2,
                                             [(n.path, STALE_HASH) for n in self._range(first, last)]))
        await self._settle(candidates)

    def _range(self, first: str, last: str) -> list[PreparedNote]:
        vault = self._vault_paths()
        return self._packable(vault[bisect_left(vault, first):bisect_right(vault, last)])

    async def _current(self, title: str, source_id: str = "") -> _PackCandidate | None:
        """The pack titled `title` as the vault's notes of its range make it now, when they make that very title
        (a title of an earlier version of nlmsync is proven by reading the source back); None otherwise."""
        parsed = parse_pack_title(title)
        if parsed is None:
            return None
        shown_first, shown_last, count, _ = parsed
        first, last = self._resolve(shown_first) or shown_first, self._resolve(shown_last) or shown_last
        local = self._range(first, last)
        if len(local) != count:
            return None
        text = compose_pack([(n.path, n.parts[0].text or "") for n in local])
        exact = content_hash(text)
        legacy = title == pack_title(first, last, count, exact)
        if not legacy and title != pack_title(first, last, count, title_hash(text)):
            return None
        if legacy and source_id and not await self._proven(source_id, title, text):
            self._legacy_refused.add((title, source_id))
            return None
        return _PackCandidate(source_id, title, first, last, count, 0,
                              [(n.path, n.parts[0].content_hash) for n in local], exact,
                              len(text.encode("utf-8", "surrogateescape")), proven=legacy)

    def _packable(self, paths: Sequence[str]) -> list[PreparedNote]:
        """The notes of `paths` that go into packs, as a run lays them out: read, of one part, small enough."""
        self._load(paths)
        notes = [n for p in paths if (n := self._note(p)) is not None and len(n.parts) == 1]
        limit = pack_limit(self.deps)
        return [n for n in notes if block_size(n.path, self._size(n)) <= limit]

    def _size(self, note: PreparedNote) -> int:
        """The note's size in bytes: its file's, as the walk found it (a note of the vault is UTF-8 on disk)."""
        stat = self._stats.get(note.path)
        return stat[1] if stat is not None else len((note.parts[0].text or "").encode("utf-8", "surrogateescape"))

    async def _settle(self, candidates: list[_PackCandidate]) -> None:
        """Give each note to one pack, by rank; record the packs adopted, delete those left holding nothing."""
        store, nb = self.deps.store, self.deps.notebook_id
        taken: set[str] = set()
        seen_titles: set[str] = set()
        vault = set(self._vault_paths())
        for pack in sorted(candidates, key=lambda c: (c.rank, c.first, c.source_id)):
            own = [(p, h) for p, h in pack.notes if p not in taken]
            if len(own) < len(pack.notes):  # a pack before it took some: it keeps those of its notes still here
                own = [(p, h) for p, h in own if p in vault]
            duplicate = not pack.registered and pack.title in seen_titles
            seen_titles.add(pack.title)
            if own and not duplicate:
                taken.update(p for p, _ in own)
                if not pack.registered or pack.rank == 0:
                    first = own[0][0] if pack.first.startswith("…") else min(pack.first, own[0][0])
                    store.record_pack(PackRecord(nb, pack.source_id, pack.content_hash, pack.title, first, pack.last,
                                                 pack.count, pack.size, pack.proven), own)
                    if not pack.registered:
                        self.done.packs.append(pack.source_id)
                elif len(own) < len(pack.notes):  # packs before it took some of its notes: its range starts later
                    store.record_pack(PackRecord(nb, pack.source_id, pack.content_hash, pack.title, own[0][0],
                                                 pack.last, pack.count, pack.size, pack.proven), own)
                continue
            if pack.registered and not pack.notes:
                continue
            if not pack.notes and not pack.registered and pack.rank == 2:
                # an older pack of notes this vault does not have (yet): kept, `refresh --all` retires it
                store.record_pack(PackRecord(nb, pack.source_id, STALE_HASH, pack.title, pack.first, pack.last,
                                             pack.count, pack.size), [])
                self.done.packs.append(pack.source_id)
                continue
            # every note it holds is held by a pack before it: a copy, or replaced
            if not pack.proven and not await self._proven(pack.source_id, pack.title):
                continue
            with store.step():
                if pack.registered:
                    store.remove_pack(nb, pack.source_id)
                self._retire(pack.source_id, f"its notes are in other packs: {pack.title}")
