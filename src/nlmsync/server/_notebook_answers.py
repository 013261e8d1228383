"""What `ask_notebook` and `refresh_notebook` answer: what a model needs to use the result, sized for its context.

The command line's `--json` documents (`AskResult`, `RefreshReport`) list every note of every pack a run touched —
on a notebook of 6,000 notes in 47 packs, tens of kilobytes for one question. A model needs the answer, each
citation's note, heading and quote, and what was uploaded; the rest comes as counts. Notes and packs a run
reused are counted, not listed; a quote is cut at `QUOTE_CHARS` (`read_note` gives the whole passage).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from nlmsync.app import AskResult
from nlmsync.sync import Branch, NoteOutcome, PackOutcome, RefreshReport

__all__ = ["NotebookAnswer", "RefreshSummary"]

QUOTE_CHARS = 400
CHANGES_SHOWN = 20
"""Most notes and packs a refresh answer lists by name; the rest are counted (`changes_not_shown`)."""


class CitedPassage(BaseModel):
    """One citation of an answer: the note and heading it quotes, and the quote."""

    number: int
    path: str | None = Field(default=None, description="The note cited (None when the quote could not be placed).")
    heading: str | None = None
    quote: str | None = None
    pack: str | None = Field(default=None, description="The source cited, when no note of it holds the quote.")


class SourceChange(BaseModel):
    """A note or a pack a run did something to: added, replaced, renamed, evicted, removed, excluded or failed."""

    done: str
    path: str | None = Field(default=None, description="The note.")
    pack: str | None = Field(default=None, description="The pack's title, for a pack (a source of many notes).")
    note_count: int | None = Field(default=None, description="The notes the pack holds.")
    renamed_from: str | None = None
    reason: str | None = Field(default=None, description="Why it was excluded, evicted or removed, or why it failed.")


class NotebookAnswer(BaseModel):
    """`ask_notebook`'s answer."""

    answer: str
    conversation_id: str | None = None
    continued: bool = Field(default=False, description="The question followed up an earlier conversation.")
    citations: list[CitedPassage] = Field(default_factory=list)
    selected_notes: list[str] = Field(default_factory=list, description="The notes chosen for the question, best "
                                      "first.")
    changes: list[SourceChange] = Field(default_factory=list, description="What was uploaded (or evicted) to ask it.")
    sources_asked: int = 0
    carried_over: int = Field(default=0, description="Of the sources asked, those the conversation used before.")
    notices: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, result: AskResult) -> NotebookAnswer:
        return cls(answer=result.answer, conversation_id=result.conversation_id, continued=result.continued,
                   citations=[CitedPassage(number=c.number, path=c.path, heading=c.heading, quote=_cut(c.cited_text),
                                           pack=None if c.path else c.pack) for c in result.citations],
                   selected_notes=[note.path for note in result.selected_notes],
                   changes=_changes(result.notes, result.packs), sources_asked=len(result.source_ids),
                   carried_over=len(result.carried_over_source_ids), notices=result.notices)


class RefreshSummary(BaseModel):
    """`refresh_notebook`'s answer."""

    notebook_id: str
    dry_run: bool = False
    counts: dict[str, int] = Field(default_factory=dict, description="Notes by what was done to their source (a note "
                                   "in a pack as its pack).")
    pack_counts: dict[str, int] = Field(default_factory=dict, description="Packs by what was done to them.")
    changes: list[SourceChange] = Field(default_factory=list, description="The notes and packs not reused.")
    changes_not_shown: int = 0
    source_count: int = 0
    capacity: int = 0
    layout: str | None = Field(default=None, description="How the sources hold the notes.")
    pending_deletions_left: int = 0
    notices: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, report: RefreshReport) -> RefreshSummary:
        changes = _changes(report.notes, report.packs)
        packs: dict[str, int] = {}
        for pack in report.packs:
            packs[pack.branch.value] = packs.get(pack.branch.value, 0) + 1
        return cls(notebook_id=report.notebook_id, dry_run=report.dry_run,
                   counts=report.counts(), pack_counts=packs, changes=changes[:CHANGES_SHOWN],
                   changes_not_shown=max(0, len(changes) - CHANGES_SHOWN), source_count=report.source_count,
                   capacity=report.capacity, layout=str(report.layout) if report.layout is not None else None,
                   pending_deletions_left=report.pending_deletions_left_count, notices=report.notices)


def _changes(notes: list[NoteOutcome], packs: list[PackOutcome]) -> list[SourceChange]:
    """The notes and packs not reused, notes first, in the run's order; a note in a pack is its pack's change."""
    packed = {path for pack in packs for path in pack.paths}
    changed = [SourceChange(done=n.branch.value, path=n.path, renamed_from=n.renamed_from, reason=n.error or n.reason)
               for n in notes if n.branch is not Branch.REUSED and n.pack is None and n.path not in packed]
    changed.extend(SourceChange(done=p.branch.value, pack=p.title, note_count=p.note_count, reason=p.error or p.reason)
                   for p in packs if p.branch is not Branch.REUSED)
    return changed


def _cut(quote: str | None) -> str | None:
    if quote is None or len(quote) <= QUOTE_CHARS:
        return quote
    return quote[:QUOTE_CHARS - 1].rstrip() + "…"
