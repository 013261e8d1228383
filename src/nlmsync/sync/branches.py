"""The branches of source preparation: what happened (or, in a dry run, would happen) to a note or a source, and the
one decision every kind kept one source per file takes (`decide_branch`, pure: notes and attachments alike)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol


class Branch(StrEnum):
    """What happened to one note or source, from the decision to the report.

    A decision takes one of the four live branches (`LIVE`): `REUSED`, `REPLACED` (add first, then delete the
    old), `RENAMED` (rebound by hash), `ADDED`. The others are outcomes only: `EXCLUDED` (not a note to upload),
    `EVICTED` (room made for others), `REMOVED` (left the vault under `refresh --all`), `FAILED`.
    """

    REUSED = "reused"
    REPLACED = "replaced"
    RENAMED = "renamed"
    ADDED = "added"
    EXCLUDED = "excluded"
    EVICTED = "evicted"
    REMOVED = "removed"
    FAILED = "failed"

    @property
    def live(self) -> bool:
        """Whether the note is live in the notebook after this branch: one of the four a decision takes."""
        return self in LIVE


LIVE = frozenset({Branch.REUSED, Branch.REPLACED, Branch.RENAMED, Branch.ADDED})
"""The branches after which the note is live in the notebook: the four a decision takes."""


class MappedPart(Protocol):
    """A registry row as the decision reads it (`registry.ResolvedMapping` is one): its source id resolved through
    the alias chain, the id as the row stores it, and the hash of what was uploaded."""

    @property
    def source_id(self) -> str: ...
    @property
    def stored_source_id(self) -> str: ...
    @property
    def content_hash(self) -> str: ...


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

    @property
    def uploads(self) -> bool:
        """Whether carrying it out uploads the file or note anew: replaced or added."""
        return self.branch in (Branch.REPLACED, Branch.ADDED)


def decide_branch(note_hashes: Sequence[str], current: Sequence[MappedPart], remote_ids: Collection[str],
                  rename_candidates: Sequence[tuple[str, Sequence[MappedPart]]] = ()) -> Decision:
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
