"""Which notes share a pack: the layout of a packed notebook, a pure function of the notes and the packs held.
The packs held keep their ranges, new boundaries are content-defined, and a layout never holds more packs than its
budget (`plan_layout`)."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

import xxhash

FILL = 0.8
"""New packs aim at no more than this share of the limit (a first layout, unless its budget needs fuller
packs; the pieces of a pack grown past the limit), so that their notes can grow a while before one has to be
split again."""

_MIN_SHARE = 0.25
"""No pack ends before it holds this share of its target."""
_EARLY, _LATE = 1.0, 2.0
"""Boundaries per target size a note may start (a hazard per byte) while a pack is below its target, and past
it: about one boundary per target size, found sooner once the pack passes its target. Both are kept low next
to the rise of a chunker that must keep sizes tight, because a boundary that depends little on how full the
pack is lets a walk disturbed by an insert fall back into step at the next boundary."""

_SPLIT_WINDOW = 1 / 8
"""A pack grown past the limit is cut within this share of a piece's size either side of each ideal cut:
pieces come out within a quarter of equal, so pieces aimed at `FILL` of the limit stay within it."""

_RANKS = float(2**64)


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
    notes are cut at content-defined boundaries into packs of about `target_bytes` — larger when the budget
    needs them to be. A pack holds at most `max_bytes`, unless one note alone is larger (the caller keeps
    such notes out of packs).

    Raises:
        NotesDoNotFit: more than `budget` packs are needed.
    """
    if not notes:
        return []
    if budget < 1:
        raise NotesDoNotFit(len(_filled([n.size for n in notes], max_bytes)), max(budget, 0))
    sizes = [n.size for n in notes]
    if starts:
        ranges = [piece for lo, hi in _kept_ranges(notes, sorted(set(starts)))
                  for piece in _within_limit(notes, sizes, lo, hi, max_bytes)]
        kept = _merged_to_budget(ranges, sizes, max_bytes, budget)
        if kept is not None:
            return kept
    target = min(max(target_bytes, math.ceil(sum(sizes) / budget)), math.ceil(max_bytes * FILL))
    while True:  # a first layout, or kept ranges that cannot fit any more: cut afresh, in larger packs if need be
        cap = max(target, math.ceil(max_bytes * FILL))  # room to grow, unless the budget needs fuller packs
        fresh = _merged_to_budget(_cut(notes, sizes, 0, len(notes), target, cap), sizes, max_bytes, budget)
        if fresh is not None:
            return fresh
        if target >= max_bytes:
            break
        target = min(max_bytes, math.ceil(target * 1.25))
    filled = _filled(sizes, max_bytes)  # packs filled to the limit in order: the fewest there can be
    if len(filled) > budget:
        raise NotesDoNotFit(len(filled), budget)
    return filled


def _kept_ranges(notes: Sequence[PackNote], starts: Sequence[str]) -> list[tuple[int, int]]:
    """The notes cut at every kept start but the first (the first pack's range reaches back to the first note);
    a start with no note in its range gives no pack."""
    paths = [n.path for n in notes]
    cuts = sorted({0, *(bisect_left(paths, s) for s in starts[1:])} - {len(paths)})
    return list(zip(cuts, [*cuts[1:], len(paths)], strict=True))


def _within_limit(notes: Sequence[PackNote], sizes: Sequence[int], lo: int, hi: int,
                  max_bytes: int) -> list[tuple[int, int]]:
    """`[lo, hi)` as it is, or split into as few pieces of about equal size as leave each within `FILL` of
    the limit: each cut near its ideal place, at the note whose path hashes lowest in a window around it."""
    size = sum(sizes[lo:hi])
    if size <= max_bytes or hi - lo < 2:
        return [(lo, hi)]
    count = min(hi - lo, math.ceil(size / (max_bytes * FILL)))
    offsets = [0]  # bytes before each note of the range
    for note_size in sizes[lo:hi]:
        offsets.append(offsets[-1] + note_size)
    width = size / count * _SPLIT_WINDOW
    cuts = [lo]
    for j in range(1, count):
        ideal = size * j / count
        window = [i for i in range(1, hi - lo) if ideal - width <= offsets[i] <= ideal + width]
        if window:
            chosen = min(window, key=lambda i: (boundary_rank(notes[lo + i].path), i))
        else:  # no note starts inside the window (a large note spans it): the nearest start
            chosen = min(range(1, hi - lo), key=lambda i: (abs(offsets[i] - ideal), i))
        if lo + chosen > cuts[-1]:
            cuts.append(lo + chosen)
    pieces = list(zip(cuts, [*cuts[1:], hi], strict=True))
    return [part for a, b in pieces for part in _within_limit(notes, sizes, a, b, max_bytes)]


def _cut(notes: Sequence[PackNote], sizes: Sequence[int], lo: int, hi: int, target: int,
         max_bytes: int) -> list[tuple[int, int]]:
    """`[lo, hi)` cut into packs at content-defined boundaries aiming at `target` bytes (see the module)."""
    pieces: list[tuple[int, int]] = []
    start, filled = lo, 0
    for i in range(lo, hi):
        size = sizes[i]
        if i > start and (filled + size > max_bytes or _starts_pack(notes[i].path, size, filled, target)):
            pieces.append((start, i))
            start, filled = i, 0
        filled += size
    pieces.append((start, hi))
    return pieces


def _starts_pack(path: str, size: int, filled: int, target: int) -> bool:
    """Whether the note at `path` (of `size` bytes) starts a new pack after one holding `filled` bytes."""
    if filled < target * _MIN_SHARE:
        return False
    hazard = (_EARLY if filled < target else _LATE) * size / target
    return boundary_rank(path) < _RANKS * -math.expm1(-hazard)


def _merged_to_budget(ranges: list[tuple[int, int]], sizes: Sequence[int], max_bytes: int,
                      budget: int) -> list[tuple[int, int]] | None:
    """Bring the packs down to `budget` one pack at a time, each time by the smallest change: neighbouring packs that
    fit in one pack fewer cut again into that many — the two with the smallest joined size merged when two fit one
    pack — choosing the window that changes the fewest packs not changed already (`_smallest_window`). None when
    not even all the packs together fit in one fewer."""
    packed = [(a, b, False) for a, b in ranges]
    offsets = [0]
    for size in sizes:
        offsets.append(offsets[-1] + size)
    while len(packed) > budget:
        window = _smallest_window(packed, sizes, offsets, max_bytes)
        if window is None:
            return None
        first, count = window
        lo, hi = packed[first][0], packed[first + count - 1][1]
        packed[first:first + count] = [(a, b, True) for a, b in _even_cut(sizes, offsets, lo, hi, count - 1,
                                                                            max_bytes)]
    return [(a, b) for a, b, _ in packed]


_WIDER = 2
"""How many packs wider than the narrowest window that fits a window is looked for, in case it changes fewer packs
not changed already."""


def _smallest_window(packed: Sequence[tuple[int, int, bool]], sizes: Sequence[int], offsets: Sequence[int],
                     max_bytes: int) -> tuple[int, int] | None:
    """Neighbouring packs (at least two) whose notes fit in one pack fewer, as (index of the first, how many): of
    those, the window whose new packs add the fewest uploads to the layout's (the packs in it not changed already,
    less one), then the fewest packs, then the fewest bytes. None when none fit."""
    best: tuple[int, int, int, int] | None = None
    for count in range(2, len(packed) + 1):
        if best is not None and count > best[1] + _WIDER:
            break
        for first in range(len(packed) - count + 1):
            lo, hi = packed[first][0], packed[first + count - 1][1]
            size = offsets[hi] - offsets[lo]
            if size > (count - 1) * max_bytes:
                continue
            untouched = sum(1 for _, _, changed in packed[first:first + count] if not changed)
            key = (untouched - 1, count, size, first)
            if (best is None or key < best) and len(_filled(sizes[lo:hi], max_bytes)) <= count - 1:
                best = key
    return (best[3], best[1]) if best is not None else None


def _even_cut(sizes: Sequence[int], offsets: Sequence[int], lo: int, hi: int, count: int,
              max_bytes: int) -> list[tuple[int, int]]:
    """`[lo, hi)` cut into `count` packs of about equal size, each at the note nearest its ideal place; the packs
    filled to the limit in order when an even cut would leave one over it."""
    total = offsets[hi] - offsets[lo]
    cuts = [lo]
    for j in range(1, count):
        ideal = offsets[lo] + total * j / count
        cut = min(range(cuts[-1] + 1, hi - (count - j) + 1), key=lambda i: (abs(offsets[i] - ideal), i))
        cuts.append(cut)
    pieces = list(zip(cuts, [*cuts[1:], hi], strict=True))
    if all(offsets[b] - offsets[a] <= max_bytes or b - a == 1 for a, b in pieces):
        return pieces
    return [(lo + a, lo + b) for a, b in _filled(sizes[lo:hi], max_bytes)]


def fewest_packs(sizes: Sequence[int], max_bytes: int) -> int:
    """The fewest packs notes of `sizes` (in path order) can be in, each filled to `max_bytes`."""
    return len(_filled(sizes, max_bytes)) if sizes else 0


def _filled(sizes: Sequence[int], max_bytes: int) -> list[tuple[int, int]]:
    """Packs filled to the limit one after another, in path order: the fewest packs the notes can be in."""
    pieces: list[tuple[int, int]] = []
    start, filled = 0, 0
    for i, size in enumerate(sizes):
        if i > start and filled + size > max_bytes:
            pieces.append((start, i))
            start, filled = i, 0
        filled += size
    pieces.append((start, len(sizes)))
    return pieces
