"""Levelling, for packs: a source the state file does not know, titled as a pack, is adopted by its title alone
when the vault's notes of its range give that very title, else read back and adopted as an older version; packs
holding the same notes are settled by `Rank` (`PackClaims.settle`)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from nlmsync.store import PackRecord
from nlmsync.sync.evidence import Evidence
from nlmsync.sync.packs.plan import pack_limit
from nlmsync.sync.packs.text import block_size, compose_pack
from nlmsync.sync.prepared import PreparedNote, is_document
from nlmsync.sync.registry import STALE_HASH
from nlmsync.sync.titles import PackTitle, content_hash, pack_title, parse_pack_title, title_hash


class PackClaim(NamedTuple):
    """A listed source the state file does not know, titled as a pack (`title`, parsed: `shown`)."""

    source_id: str
    title: str
    shown: PackTitle


class Rank(IntEnum):
    """Which of the packs holding the same notes keeps them, first first."""

    EXACT = 0
    """It holds the vault's notes exactly."""
    RECORDED = 1
    """The state file's."""
    OLDER = 2
    """An older version of the vault's notes, proven nlmsync's."""
    COPY = 3
    """A copy of one of the state file's (an add whose answer was lost)."""


@dataclass
class _PackCandidate:
    """A pack that may keep notes: a listed pack the state file knows, or one it does not (a claim)."""

    source_id: str
    title: str
    first: str
    last: str
    count: int
    rank: Rank
    notes: list[tuple[str, str]]
    """(path, note hash) of the notes of its range, in order (the hash `STALE_HASH` for an older version)."""
    content_hash: str = STALE_HASH
    size: int = 0
    proven: bool = True
    registered: bool = False


class PackClaims:
    """The pack claims of one levelling, and the state file's packs, settled against the vault (`evidence`)."""

    def __init__(self, evidence: Evidence) -> None:
        self.evidence = evidence
        self.deps = evidence.deps
        self.remote = evidence.remote
        self._legacy_refused: set[tuple[str, str]] = set()

    async def settle(self, claims: Sequence[PackClaim], records: list[PackRecord]) -> None:
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
                                             record.note_count, Rank.RECORDED, held.get(record.source_id, []),
                                             record.content_hash, record.size, record.proven, registered=True))
        registered_titles = {c.title for c in candidates}
        for source_id, title, (shown_first, shown_last, count, _) in claims:
            if title in registered_titles:  # a copy of a pack the state file keeps (an add whose answer was lost)
                candidates.append(_PackCandidate(source_id, title, shown_first, shown_last, count, Rank.COPY, [],
                                                 proven=False))
                continue
            current = await self._current(title, source_id)
            if current is not None:
                candidates.append(current)
                continue
            if current is None and (title, source_id) in self._legacy_refused:
                continue
            if not await self.evidence.proven(source_id, title):
                continue
            first, last = self.evidence.resolve(shown_first) or shown_first, self.evidence.resolve(shown_last) or shown_last
            candidates.append(_PackCandidate(source_id, title, first, last, count, Rank.OLDER,
                                             [(n.path, STALE_HASH) for n in self._range(first, last)]))
        await self._settle(candidates)

    def _range(self, first: str, last: str) -> list[PreparedNote]:
        vault = self.evidence.vault_paths()
        return self._packable(vault[bisect_left(vault, first):bisect_right(vault, last)])

    async def _current(self, title: str, source_id: str = "") -> _PackCandidate | None:
        """The pack titled `title` as the vault's notes of its range make it now, when they make that very title
        (a title of an earlier version of nlmsync is proven by reading the source back); None otherwise."""
        parsed = parse_pack_title(title)
        if parsed is None:
            return None
        shown_first, shown_last, count, _ = parsed
        first, last = self.evidence.resolve(shown_first) or shown_first, self.evidence.resolve(shown_last) or shown_last
        local = self._range(first, last)
        # a pack holds the documents of its range when they were packed, none of them when they are file sources
        for held in (local, [n for n in local if not is_document(n.path)]):
            text = compose_pack([(n.path, n.parts[0].text or "") for n in held])
            exact = content_hash(text)
            legacy = title == pack_title(first, last, count, exact)
            if len(held) == count and (legacy or title == pack_title(first, last, count, title_hash(text))):
                local = held
                break
        else:
            return None
        if legacy and source_id and not await self.evidence.proven(source_id, title, text):
            self._legacy_refused.add((title, source_id))
            return None
        return _PackCandidate(source_id, title, first, last, count, Rank.EXACT,
                              [(n.path, n.parts[0].content_hash) for n in local], exact,
                              len(text.encode("utf-8", "surrogateescape")), proven=legacy)

    def _packable(self, paths: Sequence[str]) -> list[PreparedNote]:
        """The notes of `paths` that go into packs, as a run lays them out: read, of one part, small enough."""
        self.evidence.load(paths)
        notes = [n for p in paths if (n := self.evidence.note(p)) is not None and len(n.parts) == 1]
        limit = pack_limit(self.deps)
        return [n for n in notes if block_size(n.path, self._size(n)) <= limit]

    def _size(self, note: PreparedNote) -> int:
        """The note's size in bytes: its file's, as the walk found it (a note of the vault is UTF-8 on disk); a
        document's, its text's."""
        stat = self.evidence.stats.get(note.path) if not is_document(note.path) else None  # a file's bytes are not its text
        return stat[1] if stat is not None else len((note.parts[0].text or "").encode("utf-8", "surrogateescape"))

    async def _settle(self, candidates: list[_PackCandidate]) -> None:
        """Give each note to one pack, by rank; record the packs adopted, delete those left holding nothing."""
        store, nb = self.deps.store, self.deps.notebook_id
        taken: set[str] = set()
        seen_titles: set[str] = set()
        vault = set(self.evidence.vault_paths())
        for pack in sorted(candidates, key=lambda c: (c.rank, c.first, c.source_id)):
            own = [(p, h) for p, h in pack.notes if p not in taken]
            if len(own) < len(pack.notes):  # a pack before it took some: it keeps those of its notes still here
                own = [(p, h) for p, h in own if p in vault]
            duplicate = not pack.registered and pack.title in seen_titles
            seen_titles.add(pack.title)
            if own and not duplicate:
                taken.update(p for p, _ in own)
                if not pack.registered or pack.rank is Rank.EXACT:
                    first = own[0][0] if pack.first.startswith("…") else min(pack.first, own[0][0])
                    store.record_pack(PackRecord(nb, pack.source_id, pack.content_hash, pack.title, first, pack.last,
                                                 pack.count, pack.size, pack.proven), own)
                    if not pack.registered:
                        self.evidence.done.packs.append(pack.source_id)
                elif len(own) < len(pack.notes):  # packs before it took some of its notes: its range starts later
                    store.record_pack(PackRecord(nb, pack.source_id, pack.content_hash, pack.title, own[0][0],
                                                 pack.last, pack.count, pack.size, pack.proven), own)
                continue
            if pack.registered and not pack.notes:
                continue
            if not pack.notes and not pack.registered and pack.rank is Rank.OLDER:
                # an older pack of notes this vault does not have (yet): kept, `refresh --all` retires it
                store.record_pack(PackRecord(nb, pack.source_id, STALE_HASH, pack.title, pack.first, pack.last,
                                             pack.count, pack.size), [])
                self.evidence.done.packs.append(pack.source_id)
                continue
            # every note it holds is held by a pack before it: a copy, or replaced
            if not pack.proven and not await self.evidence.proven(pack.source_id, pack.title):
                continue
            with store.step():
                if pack.registered:
                    store.remove_pack(nb, pack.source_id)
                self.evidence.retire(pack.source_id, f"its notes are in other packs: {pack.title}")
