"""The branches of source preparation: what happened (or, in a dry run, would happen) to a note or a source."""

from __future__ import annotations

from enum import StrEnum


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
