"""The pure part of source preparation: what a note looks like to upload, and which branch it takes.

Nothing here touches the disk, the state file or the server, so every branch can be tested alone.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Literal

from nlmsync.sync.split import MAX_SOURCE_BYTES, MAX_SOURCE_WORDS, split_note
from nlmsync.sync.titles import content_hash, source_title, title_hash


class Branch(StrEnum):
    """What happened (or, in a dry run, would happen) to one note or source, from the decision to the report.

    A `Decision` takes one of the four branches: `REUSED`, `REPLACED` (add first, then delete the old),
    `RENAMED` (rebound by hash), `ADDED`. The others are outcomes only: `EXCLUDED` (not a note to upload),
    `EVICTED` (room made for others),
    `REMOVED` (left the vault under `refresh --all`), `FAILED`.
    """

    REUSED = "reused"
    REPLACED = "replaced"
    RENAMED = "renamed"
    ADDED = "added"
    EXCLUDED = "excluded"
    EVICTED = "evicted"
    REMOVED = "removed"
    FAILED = "failed"


@dataclass(frozen=True)
class PreparedPart:
    """One source to upload: part `index` of the `part_count` parts of the note at `path`, the exact text, its
    xxh3-128 hash and its deterministic title. `text` is None for a note recognised unchanged by its file's stat
    and not read (`known_note`): such a part has no title until it is read."""

    index: int
    text: str | None
    content_hash: str
    path: str
    part_count: int = 1

    @cached_property
    def title(self) -> str:
        """The source's title, by the hash of its words (made when first asked for: a note that goes into a pack
        needs none).

        Raises:
            RuntimeError: the part was not read (a caller's mistake: only a note read is uploaded or adopted).
        """
        if self.text is None:
            raise RuntimeError(f"{self.path}: a note that was not read has no title")
        return source_title(self.path, title_hash(self.text), self.index, self.part_count)

    @property
    def legacy_title(self) -> str:
        """The title earlier versions of nlmsync gave this text (by the hash of its exact bytes)."""
        return source_title(self.path, self.content_hash, self.index, self.part_count)

    def titles(self) -> tuple[str, str]:
        """The titles this very text may be listed under: nlmsync's, and the one earlier versions gave it."""
        return self.title, self.legacy_title


@dataclass(frozen=True)
class PreparedNote:
    path: str
    parts: tuple[PreparedPart, ...]

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(p.content_hash for p in self.parts)

    @property
    def is_read(self) -> bool:
        """Whether the parts carry their text (a note only `known_note` does not)."""
        return all(p.text is not None for p in self.parts)


def prepare_note(path: str, text: str, max_words: int = MAX_SOURCE_WORDS,
                 max_bytes: int = MAX_SOURCE_BYTES) -> PreparedNote:
    """Split (if needed), hash and title the text of the note at `path`."""
    texts = split_note(text, max_words, max_bytes)
    hashes = [content_hash(t) for t in texts]
    return PreparedNote(path, tuple(
        PreparedPart(i, t, h, path, len(texts)) for i, (t, h) in enumerate(zip(texts, hashes))
    ))


def known_note(path: str, hashes: Sequence[str]) -> PreparedNote:
    """The note at `path` as its part hashes (recorded when it was last read) make it: hashes and titles,
    without the text. Enough to decide its branch; a note that is to be uploaded has to be read."""
    return PreparedNote(path, tuple(PreparedPart(i, None, h, path, len(hashes)) for i, h in enumerate(hashes)))


@dataclass(frozen=True)
class ResolvedMapping:
    """A source mapping (one registry row) as the decision needs it: `source_id` already resolved through the
    alias chain, `stored_source_id` as the row holds it."""

    part: int
    source_id: str
    content_hash: str
    stored_source_id: str


@dataclass(frozen=True)
class Decision:
    """The branch a note takes (one of the four branches of `Branch`).

    - `REUSED`: keep `keep` (one id per part); `canonicalize` when a stored id was an alias.
    - `REPLACED`: upload every part first, then retire `previous` (live ids of the old version).
    - `RENAMED`: rebind the registry rows of `rename_from` (a vanished path with the same hashes).
    - `ADDED`: upload every part.
    `prior_part_ids` (replaced, added) are the resolved ids of the note's earlier rows, aliased to the new ones.
    """

    branch: Literal[Branch.REUSED, Branch.REPLACED, Branch.RENAMED, Branch.ADDED]
    keep: tuple[str, ...] = ()
    previous: tuple[str, ...] = ()
    rename_from: str | None = None
    canonicalize: bool = False
    prior_part_ids: tuple[str, ...] = ()


def decide_branch(note_hashes: Sequence[str], current: Sequence[ResolvedMapping], remote_ids: Collection[str],
                  rename_candidates: Sequence[tuple[str, Sequence[ResolvedMapping]]] = ()) -> Decision:
    """Exactly one branch for a note whose parts hash to `note_hashes`.

    `current` are the note's registry rows (ordered by part), `rename_candidates` the rows of vanished
    paths that registered the note's first hash. Reuse needs every part live with an equal hash;
    any live part with a different hash (or a different split) means replace; otherwise a vanished
    path with identical, all-live parts means rename; otherwise new.
    """
    live = [p for p in current if p.source_id in remote_ids]
    if current and len(live) == len(current) and tuple(p.content_hash for p in current) == tuple(note_hashes):
        return Decision(Branch.REUSED, keep=tuple(p.source_id for p in current),
                        canonicalize=any(p.source_id != p.stored_source_id for p in current))
    prior = tuple(p.source_id for p in current)
    if live:
        return Decision(Branch.REPLACED, previous=tuple(p.source_id for p in live), prior_part_ids=prior)
    for old_path, rows in rename_candidates:
        if (rows and tuple(r.content_hash for r in rows) == tuple(note_hashes)
                and all(r.source_id in remote_ids for r in rows)):
            return Decision(Branch.RENAMED, keep=tuple(r.source_id for r in rows), rename_from=old_path)
    return Decision(Branch.ADDED, prior_part_ids=prior)
