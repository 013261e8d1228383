"""The typed records the state store hands out (plain dataclasses: cheap to build by the thousand)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Status = Literal["active", "stale"]
STATUSES: frozenset[str] = frozenset({"active", "stale"})


@dataclass(kw_only=True, slots=True)
class SourceMapping:
    """One registry row: a vault note (or one part of a split note) bound to a NotebookLM source.

    `part` is 0 for an unsplit note; a note split into `part_count` parts has one row per part and is
    managed as one unit. `content_hash` is the xxh3-128 of the exact bytes uploaded. `managed` is True
    for sources nlmsync uploaded itself (the only ones it may evict). `first_used`/`last_used` are
    ISO-8601 UTC timestamps (None until the note is first used in a query).
    """

    notebook_id: str
    path: str
    source_id: str
    content_hash: str
    title: str
    part: int = 0
    part_count: int = 1
    status: Status = "active"
    managed: bool = True
    first_used: str | None = None
    last_used: str | None = None
    use_count: int = 0

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be 'active' or 'stale', not {self.status!r}")
        if self.part_count < 1 or not 0 <= self.part < self.part_count:
            raise ValueError(f"part {self.part} is not within part_count {self.part_count}")
        if not self.source_id:
            raise ValueError("source_id must not be empty")


class ResolvedRow(NamedTuple):
    """A registry row with its source id resolved through the alias chain (the id the notebook lists it by)."""

    row: SourceMapping
    source_id: str


@dataclass(frozen=True, slots=True)
class NoteHashes:
    """The part hashes of the vault note at `path` as last read, while its file had `mtime_ns` and `size`;
    `split` names the split limits the note was cut into parts with (`"words/bytes"`)."""

    path: str
    mtime_ns: int
    size: int
    split: str
    hashes: tuple[str, ...]

    def holds_for(self, mtime_ns: int, size: int, split: str) -> bool:
        """Whether the record stands for the note's file as it is now (its mtime and size) when cut into parts
        with the split limits `split`: the one rule by which refresh and status take a note as unchanged."""
        return self.mtime_ns == mtime_ns and self.size == size and self.split == split


@dataclass(frozen=True, slots=True)
class LearnedCapacity:
    """What the server's refusal of an add as full taught: the notebook held `held` sources then, and the run's
    capacity was `under`."""

    held: int
    under: int


@dataclass(slots=True)
class ReconcileResult:
    """Outcome of reconciliation (alias canonicalization); each list holds the mappings as they are after the step."""

    active: list[SourceMapping] = field(default_factory=list)
    stale: list[SourceMapping] = field(default_factory=list)
    canonicalized: list[SourceMapping] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EvictionRecord:
    notebook_id: str
    path: str
    source_id: str
    reason: str
    evicted_at: str


@dataclass(frozen=True, slots=True)
class PendingDeletion:
    """An old source whose best-effort delete failed; retried later, never forgotten silently."""

    notebook_id: str
    source_id: str
    reason: str
    queued_at: str


@dataclass(frozen=True, slots=True)
class Message:
    question: str
    answer: str
    asked_at: str


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One conversation as a listing shows it: its notebook, how many turns are kept, when, and how it began."""

    notebook_id: str
    conversation_id: str
    turn_count: int
    started_at: str
    last_asked_at: str
    first_question: str


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """What conversation carry-over needs from one query: the source ids sent, the notes selected, citations."""

    conversation_id: str
    question: str
    source_ids: list[str]
    selected_paths: list[str]
    citations: dict[str, Any]
    asked_at: str
