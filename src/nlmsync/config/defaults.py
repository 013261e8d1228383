"""The defaults of what nlmsync scores with, written once: the settings a search index reads (`IndexSettings`,
whose defaults the settings model takes) and BM25's parameters for passages, which no setting changes.

Imported by `config` at once (no pydantic), by `config.model` and by search's BM25 (`search.bm25.Weights`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nlmsync.vault import DEFAULT_ATTACHMENT_KINDS

__all__ = ["PASSAGE_B", "PASSAGE_K1", "SNIPPET_K1", "IndexSettings"]


@dataclass(frozen=True)
class IndexSettings:
    """The settings a search index reads and their defaults, the one place they are written: `Settings` (the
    pydantic model) and the field weights (`search.bm25.Weights`) take theirs from here. What a `NoteIndex` given
    no settings uses, without pydantic."""

    k1: float = 1.0
    b: float = 0.75
    weight_body: float = 1.0
    weight_heading: float = 2.5
    weight_path: float = 4.0
    weight_folder: float = 1.0
    query_stop_words: bool = True
    full_rescan_every: int = 50
    exclude: list[str] = field(default_factory=list)
    attachments: list[str] = field(default_factory=lambda: list(DEFAULT_ATTACHMENT_KINDS))
    top_n: int = 15
    cutoff_ratio: float = 0.4
    min_k: int = 3


# BM25's parameters where nlmsync scores passages rather than notes, which no setting changes: the passages of a
# note (`read_note`'s and `search_notes`' chunk search) and of a notebook's sources (the fake's answers), and, with
# a later saturation, the segments a snippet is chosen from.
PASSAGE_K1 = 1.2
PASSAGE_B = 0.75
SNIPPET_K1 = 1.5
