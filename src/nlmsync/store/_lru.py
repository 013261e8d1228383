"""Pure segmented-LRU policy for eviction candidates.

Two segments: *probation* holds notes used at most once, *protected* holds notes used again and is
bounded to a share of capacity. A use moves a note to the most-recent end of its segment (to
protected once it has been used twice); protected overflow demotes its least recent entry to the
most-recent end of probation. Eviction takes probation's least recent first, then protected's, so a
single large refresh (many notes used once) cannot flush the notes a user keeps asking about.
Recency is a monotonically increasing `tick`, never a clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Literal, NamedTuple

Segment = Literal["probation", "protected"]
PROBATION: Segment = "probation"
PROTECTED: Segment = "protected"


class LruEntry(NamedTuple):
    """One candidate's place in the queue (a tuple: a use of every note of a large refresh makes one each)."""

    path: str
    segment: Segment
    tick: int
    uses: int


def protected_capacity(capacity: int, protected_share: float) -> int:
    """How many notes the protected segment may hold (rounded down, never negative)."""
    return max(0, math.floor(capacity * protected_share + 1e-9))


def apply_use(entries: Mapping[str, LruEntry], used: Iterable[str], next_tick: int,
              protected_cap: int, unseen_protected: int = 0) -> tuple[dict[str, LruEntry], int]:
    """Mark `used` paths (each counted once, in order) and rebalance the segments.

    `entries` holds the current entries (`uses` before this use): every used one, and the protected
    ones — all of them, or only the least recent ones with `unseen_protected` counting the more recent
    others (enough of the least recent must be given to cover any overflow). Returns the entries that
    changed (new values) and the next free tick. Paths not in `entries` are ignored: only queued notes
    (managed, active) take part in eviction.
    """
    current = dict(entries)
    changed: dict[str, LruEntry] = {}
    seen: set[str] = set()
    for path in used:
        if path in seen or path not in current:
            continue
        seen.add(path)
        entry = current[path]
        uses = entry.uses + 1
        segment: Segment = PROTECTED if uses >= 2 else PROBATION
        updated = LruEntry(path, segment, next_tick, uses)
        next_tick += 1
        current[path] = changed[path] = updated
    protected = sorted((e for e in current.values() if e.segment == PROTECTED), key=lambda e: e.tick)
    for entry in protected[: max(0, len(protected) + unseen_protected - protected_cap)]:
        demoted = LruEntry(entry.path, PROBATION, next_tick, entry.uses)
        next_tick += 1
        current[entry.path] = changed[entry.path] = demoted
    return changed, next_tick


def eviction_order(entries: Iterable[LruEntry], exclude: Iterable[str] = ()) -> list[str]:
    """Paths in the order they should be evicted: probation LRU first, then protected LRU."""
    skip = set(exclude)
    ranked = sorted((e for e in entries if e.path not in skip),
                    key=lambda e: (e.segment != PROBATION, e.tick))
    return [e.path for e in ranked]
