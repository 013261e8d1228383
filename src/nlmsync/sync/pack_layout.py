"""Which notes share a pack: the layout of a packed notebook, a pure function of the vault and the packs it holds.

Notes are taken in path order, so a folder's notes stay together. A layout is a list of packs, each a run
of consecutive notes. Two rules keep it put as the vault changes:

- **Kept ranges.** Every pack a notebook holds starts at its first note's path, and that path stays the start
  of a pack: a note that sorts between two starts belongs to the pack of the first. An inserted note joins
  the pack whose range holds it, a deleted one leaves its pack, an edited one stays where it is: one pack
  changes, and no boundary elsewhere moves.
- **Content-defined boundaries.** Where a new boundary is needed — the first layout of a vault, or a pack
  grown past the per-source limit — it is chosen the way content-defined chunking (rsync, restic) chooses
  chunk boundaries: near each ideal cut, inside a window, the note whose path hashes lowest starts the next
  pack. The choice depends on the notes near the cut only, so the same notes give the same packs again (a
  run killed part-way plans the very packs it was making) and an insert elsewhere does not move it.

A layout never holds more packs than its budget: when kept ranges and splits come to more, the two
neighbouring packs with the smallest joined size are merged until it fits, and `NotesDoNotFit` says so when
no merge can make it fit. Pure and deterministic: no disk, no server.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import xxhash

FILL = 0.8
"""A pack is cut to hold at most this share of the per-source limit, so that its notes can grow a while before
it has to be split."""

WINDOW = 1 / 8
"""Half the width of the window a boundary is chosen in, as a share of a pack's ideal size: pieces come out
within 25% of equal, so a pack cut to `FILL` of the limit never goes over it."""


@dataclass(frozen=True, slots=True)
class PackNote:
    """A note as the layout sees it: its vault path and the bytes it takes in a pack (heading included)."""

    path: str
    size: int


class NotesDoNotFit(Exception):
    """The notes need more packs than the budget allows, even with every pack filled to the limit."""

    def __init__(self, needed: int, budget: int) -> None:
        super().__init__(f"the notes need at least {needed} packs, {budget} fit")
        self.needed = needed
        self.budget = budget


def boundary_rank(path: str) -> int:
    """The hash by which a path is chosen to start a pack (the lowest in a window wins)."""
    return xxhash.xxh3_64_intdigest(path.encode("utf-8", "surrogateescape"))


def plan_layout(notes: Sequence[PackNote], starts: Sequence[str], *, max_bytes: int, budget: int,
                target_bytes: int) -> list[tuple[int, int]]:
    """The packs of `notes` (sorted by path), as `[start, end)` index ranges in order.

    `starts` are the first paths of the packs the notebook holds (their ranges are kept); with none, the
    notes are cut into about `target_bytes` packs, fewer when the budget is tight. A pack holds at most
    `max_bytes`, unless one note alone is larger (the caller keeps such notes out of packs).

    Raises:
        NotesDoNotFit: more than `budget` packs are needed.
    """
    if not notes:
        return []
    if budget < 1:
        raise NotesDoNotFit(_least_packs(notes, max_bytes), budget)
    sizes = [n.size for n in notes]
    ranges = _kept_ranges(notes, sorted(set(starts)))
    if len(ranges) == 1 and not starts:
        total = sum(sizes)
        count = max(min(math.ceil(total / target_bytes), budget), math.ceil(total / (max_bytes * FILL)))
        ranges = _split(notes, sizes, 0, len(notes), count, max_bytes)
    else:
        ranges = [piece for lo, hi in ranges for piece in _within_limit(notes, sizes, lo, hi, max_bytes)]
    return _merged_to_budget(ranges, sizes, max_bytes, budget, notes)


def _kept_ranges(notes: Sequence[PackNote], starts: Sequence[str]) -> list[tuple[int, int]]:
    """The notes cut at every kept start (a start with no note in its range gives no pack)."""
    paths = [n.path for n in notes]
    cuts = sorted({0, *(bisect_left(paths, s) for s in starts)} - {len(paths)})
    return list(zip(cuts, [*cuts[1:], len(paths)], strict=True))


def _within_limit(notes: Sequence[PackNote], sizes: Sequence[int], lo: int, hi: int,
                  max_bytes: int) -> list[tuple[int, int]]:
    """`[lo, hi)` as it is, or split into as few pieces as leave each at most `FILL` of the limit."""
    size = sum(sizes[lo:hi])
    if size <= max_bytes or hi - lo < 2:
        return [(lo, hi)]
    return _split(notes, sizes, lo, hi, math.ceil(size / (max_bytes * FILL)), max_bytes)


def _split(notes: Sequence[PackNote], sizes: Sequence[int], lo: int, hi: int, count: int,
           max_bytes: int) -> list[tuple[int, int]]:
    """`[lo, hi)` cut into `count` pieces of about equal size at content-defined boundaries; a piece still over
    the limit (a few large notes) is split again."""
    count = max(1, min(count, hi - lo))
    if count == 1:
        return [(lo, hi)]
    offsets = [0]  # bytes before each note of the range
    for size in sizes[lo:hi]:
        offsets.append(offsets[-1] + size)
    total = offsets[-1]
    width = total / count * WINDOW
    cuts = [lo]
    for j in range(1, count):
        ideal = total * j / count
        first = bisect_left(offsets, ideal - width, 1, hi - lo)
        last = bisect_left(offsets, ideal + width, 1, hi - lo)
        window = [i for i in range(first, min(last + 1, hi - lo)) if offsets[i] <= ideal + width]
        if window:
            chosen = min(window, key=lambda i: (boundary_rank(notes[lo + i].path), i))
        else:  # no note starts inside the window (a large note spans it): the nearest start
            chosen = min(range(1, hi - lo), key=lambda i: (abs(offsets[i] - ideal), i))
        if lo + chosen > cuts[-1]:
            cuts.append(lo + chosen)
    pieces = list(zip(cuts, [*cuts[1:], hi], strict=True))
    return [part for a, b in pieces for part in _within_limit(notes, sizes, a, b, max_bytes)]


def _merged_to_budget(ranges: list[tuple[int, int]], sizes: Sequence[int], max_bytes: int, budget: int,
                      notes: Sequence[PackNote]) -> list[tuple[int, int]]:
    """Merge the neighbouring packs with the smallest joined size (within the limit) until `budget` is met."""
    packed = [(a, b, sum(sizes[a:b])) for a, b in ranges]
    while len(packed) > budget:
        pairs = [(packed[i][2] + packed[i + 1][2], i) for i in range(len(packed) - 1)
                 if packed[i][2] + packed[i + 1][2] <= max_bytes]
        if not pairs:
            raise NotesDoNotFit(max(_least_packs(notes, max_bytes), budget + 1), budget)
        joined, i = min(pairs)
        packed[i:i + 2] = [(packed[i][0], packed[i + 1][1], joined)]
    return [(a, b) for a, b, _ in packed]


def _least_packs(notes: Sequence[PackNote], max_bytes: int) -> int:
    """How many packs the notes need at the least: filled to the limit one after another, in path order."""
    count, filled = 0, max_bytes
    for note in notes:
        if filled + note.size > max_bytes:
            count, filled = count + 1, 0
        filled += note.size
    return count
