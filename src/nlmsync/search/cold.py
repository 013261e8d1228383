"""The cold answer: a process's first query answered straight from the state file, a source of postings for the
ranker (`search.scoring`).

A fresh `nlmsync search` (or `ask`'s selection) on a vault that did not change since the index was saved
needs neither the whole index in memory nor numpy: it must check every note's `mtime_ns` and size against
the saved ones (changes made while nothing ran) and score the few postings lists its query terms have.
`answer_cold` does exactly that, from `search.snapshot_parts.SnapshotParts` (the saved notes and vocabulary, and
each query term's postings read on demand) and the cache's rows (the notes indexed since that snapshot).

It answers only when the vault is what the cache says; anything else — a note added, edited, gone or newly
skipped, a row the whole-index path would re-read — gives None, and the caller takes the whole-index path
(`NoteIndex.sync`), which reads what changed and saves it. When it answers, its hits are the very hits the
loaded index gives for the same index (`search.ranking`): the same contributions, computed with the same float
operations, and the same ranker. A property test holds the two paths to that.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from nlmsync.search.bm25 import Contributions, Params, contribution, idf, length_norm
from nlmsync.search.hits import Evidence, SearchHit
from nlmsync.search.scoring import hits, note_candidates, telling
from nlmsync.search.snapshot_parts import SnapshotParts
from nlmsync.store.index_codec import INDEXED as _INDEXED
from nlmsync.store.index_codec import SKIPPED as _SKIPPED
from nlmsync.store.index_codec import CachedDoc, load_docs
from nlmsync.store.transaction import transaction

if TYPE_CHECKING:
    import sqlite3

    from nlmsync.search.word_forms import WordForms
    from nlmsync.vault import VaultListing

__all__ = ["answer_cold", "answer_from_file", "vault_unchanged"]


def answer_from_file(conn: sqlite3.Connection, walk: VaultListing, query: Mapping[str, float], limit: int | None,
                     common: frozenset[str], params: Params, evidence: Evidence | None = None,
                     forms: WordForms | None = None) -> list[SearchHit] | None:
    """The hits of `query` from the state file, or None when `walk` (the vault as just walked) is not what the
    cache holds, or the cache cannot answer (damaged, locked): the caller then syncs. The snapshot and the rows
    are read in one read transaction."""
    import sqlite3

    try:
        with transaction(conn):
            parts = SnapshotParts.read(conn)
            rows = load_docs(conn)
            if not vault_unchanged(parts, rows, walk):
                return None
            return answer_cold(parts, rows, query, limit, common, params, evidence, forms)
    except (sqlite3.Error, ValueError, UnicodeDecodeError):
        return None


def vault_unchanged(parts: SnapshotParts, rows: Sequence[CachedDoc], listing: VaultListing) -> bool:
    """Whether a full rescan of `listing` against the snapshot and its rows would find nothing to do.

    Every listed note must be a snapshot note no row hides, or an indexed or skipped row, with the same
    `mtime_ns` and size; every snapshot note and indexed row must be listed; the walk's skips must be the
    skipped rows' (a path, no stat, the same reason), and every skipped row still found. An indexed row whose
    terms could not be read is a note the whole-index path would read again: not unchanged.
    """
    row_of = {row.path: row for row in rows}
    paths, mtimes, sizes = listing.paths, listing.mtimes, listing.sizes
    indexed_rows = skipped_rows = found_skipped = 0
    if row_of:
        if any(row.kind == _INDEXED and not row.terms for row in rows):
            return False
        indexed_rows = sum(1 for row in rows if row.kind == _INDEXED)
        skipped_rows = sum(1 for row in rows if row.kind == _SKIPPED)
        at_rows = [i for i, path in enumerate(paths) if path in row_of]
        listed_rows = 0
        for i in at_rows:  # a note the rows describe: with the stats it was indexed or skipped at
            row = row_of[paths[i]]
            if row.kind not in (_INDEXED, _SKIPPED) or (row.mtime_ns, row.size) != (mtimes[i], sizes[i]):
                return False
            listed_rows += row.kind == _INDEXED
            found_skipped += row.kind == _SKIPPED
        if listed_rows != indexed_rows:
            return False
        if at_rows:
            at = set(at_rows)
            rest = [i for i in range(len(paths)) if i not in at]
            paths, mtimes, sizes = [paths[i] for i in rest], [mtimes[i] for i in rest], [sizes[i] for i in rest]
        for skip in listing.skipped:
            skipped_row = row_of.get(skip.path)
            if (skipped_row is None or skipped_row.kind != _SKIPPED
                    or (skipped_row.mtime_ns, skipped_row.size, skipped_row.skip_reason) != (0, 0, skip.reason)):
                return False
            found_skipped += 1
    elif listing.skipped:
        return False
    if found_skipped != skipped_rows:
        return False
    # the other notes, compared with the snapshot's: at once when the walk lists them in the snapshot's order (a
    # vault indexed whole, unchanged since or changed only by what the rows hold), else through each path's slot
    if parts.holds_exactly(paths, mtimes, sizes):
        return True
    if row_of and parts.holds_in_order(paths, mtimes, sizes, row_of):
        return True
    slot_of = parts.slot_of
    hidden = sum(1 for path in row_of if path in slot_of)  # snapshot notes a row stands for
    if len(paths) != len(slot_of) - hidden:
        return False
    slots = [slot_of.get(path, -1) for path in paths]
    if -1 in slots:
        return False
    stored_mtimes, stored_sizes = parts.mtimes, parts.sizes
    return [stored_mtimes[slot] for slot in slots] == mtimes and [stored_sizes[slot] for slot in slots] == sizes


def answer_cold(parts: SnapshotParts, rows: Sequence[CachedDoc], query: Mapping[str, float],
                limit: int | None, common: frozenset[str], params: Params, evidence: Evidence | None = None,
                forms: WordForms | None = None) -> list[SearchHit]:
    """The hits of the index the snapshot and its rows make (rows hide the snapshot's entry for their path;
    indexed rows are the overlay), ranked from the query terms' postings alone; `evidence` and `forms` as
    `Ranking.rank`'s.

    Raises:
        ValueError: a part of the snapshot is out of bounds (see `SnapshotParts`).
    """
    weights, k1, b = params.weights, params.k1, params.b
    overlay = [row for row in rows if row.kind == _INDEXED]
    paths = parts.paths
    hidden = {slot for slot, path in enumerate(paths) if path is None} if None in paths else set()
    if rows:
        hidden.update(parts.slots_of({row.path for row in rows}))
    n_docs = len(paths) - len(hidden) + len(overlay)
    if evidence is not None:
        evidence.notes = n_docs
    if not n_docs or not query:
        return []
    if forms is not None:
        def prefixed(prefix: str, cap: int) -> list[str]:
            found = parts.terms.prefixed(prefix, cap)
            return found + sorted({term for row in overlay for term in row.terms or () if term.startswith(prefix)})[:cap]

        query = forms.expand(query, prefixed)
        if evidence is not None:
            evidence.forms.update(forms.found)
    lengths = parts.lengths.tolist()  # three per note: body, heading, path token counts
    totals = [sum(lengths[0::3]), sum(lengths[1::3]), sum(lengths[2::3])]
    for slot in hidden:
        for i in range(3):
            totals[i] -= lengths[3 * slot + i]
    for row in overlay:
        for i in range(3):
            totals[i] += row.lengths[i]
    avg = weights.length(totals[0], totals[1], totals[2]) / n_docs

    def norm(body: int, heading: int, path: int) -> float:  # `PostingsIndex.norms`, one note at a time
        return length_norm(weights.length(body, heading, path), avg, k1, b)

    found: list[_Found] = []  # the terms some note holds, in term order
    for term, query_weight in sorted(query.items()):
        term_id = parts.terms.find(term)
        slots: Sequence[int] = ()
        tfs: Sequence[float] = ()
        if term_id is not None:
            slots, tfs = parts.postings(term_id)
            if hidden:
                kept = [i for i, slot in enumerate(slots) if slot not in hidden]
                slots, tfs = [slots[i] for i in kept], [tfs[i] for i in kept]
        held = [(row.path, row.terms[term], norm(*row.lengths)) for row in overlay if row.terms and term in row.terms]
        if evidence is not None:
            evidence.dfs[term] = len(slots) + len(held)
        if len(slots) + len(held):
            found.append(_Found(term, query_weight, len(slots) + len(held), slots, tfs, held))
    found = telling(found, n_docs, common, operator.attrgetter("term"), operator.attrgetter("df"))
    needed: set[int] = set()
    for entry in found:
        needed.update(entry.slots)
    # an int times a float is the float of the int times it: the same norms as `PostingsIndex.norms`
    norms = [0.0] * len(paths)
    for slot in needed:
        norms[slot] = norm(lengths[3 * slot], lengths[3 * slot + 1], lengths[3 * slot + 2])
    contributions: list[Contributions[int | str]] = []
    for entry in found:
        weight = entry.query_weight * idf(n_docs, entry.df)
        notes: list[int | str] = [*entry.slots, *(path for path, _tf, _norm in entry.held)]
        values = [contribution(weight, tf, norms[slot], k1) for slot, tf in zip(entry.slots, entry.tfs)]
        values += [contribution(weight, tf, path_norm, k1) for _path, tf, path_norm in entry.held]
        contributions.append((notes, values))

    def path_of(key: int | str) -> str:  # a snapshot note by its slot, a row's by its path
        return key if isinstance(key, str) else paths[key] or ""

    return hits(note_candidates(contributions, limit, path_of), [entry.term for entry in found], limit)


class _Found(NamedTuple):
    """A query term some note holds: its postings (live snapshot notes, then indexed rows with their norms)."""

    term: str
    query_weight: float
    df: int
    slots: Sequence[int]
    tfs: Sequence[float]
    held: list[tuple[str, float, float]]
