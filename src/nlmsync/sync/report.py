"""What a refresh did, note by note: the models printed by the CLI and returned to the MCP server.

An error that stops a run part-way carries what was done and recorded before it as a `RefreshReport` in
its `report` (`stop_report`, read back with `notes_done`), from sync up to the command line."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, computed_field

from nlmsync.errors import NlmsyncError
from nlmsync.sync.branches import Branch


class NoteOutcome(BaseModel):
    """One note (or, for evictions and removals, one vault path whose sources left the notebook)."""

    path: str
    branch: Branch
    source_ids: list[str] = Field(default_factory=list)
    previous_source_ids: list[str] = Field(default_factory=list)
    part_count: int = 1
    renamed_from: str | None = None
    adopted: bool = Field(default=False, description="A source the notebook held already was taken instead of "
                          "uploading: one the state file did not know (another machine's, an interrupted run's).")
    reason: str | None = None
    error: str | None = None
    pack: str | None = Field(default=None, description="The title of the pack the note is live in, if packed.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def split(self) -> bool:
        """The note went up as several numbered parts."""
        return self.part_count > 1


class PackOutcome(BaseModel):
    """One pack (a source holding many notes): reused, added, replaced (its notes were in older sources), removed
    (its notes left the notebook's packs) or failed, with the notes it holds in order."""

    branch: Branch
    title: str
    source_id: str | None = None
    previous_source_ids: list[str] = Field(default_factory=list)
    paths: list[str] = Field(default_factory=list)
    byte_count: int = Field(default=0, description="Bytes of text.")
    adopted: bool = Field(default=False, description="A source the notebook held already was taken instead of "
                          "uploading: one the state file did not know (another machine's, an interrupted run's).")
    reason: str | None = None
    error: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def note_count(self) -> int:
        return len(self.paths)

    @property
    def path(self) -> str:
        """How a progress line names the pack: its title."""
        return self.title


class SourcesLayout(BaseModel):
    """How the notebook's live sources hold the vault's notes: notes alone (one source each, or the parts of a
    split note), and packs with the notes they hold."""

    alone_note_count: int = 0
    pack_count: int = 0
    packed_note_count: int = 0

    def __str__(self) -> str:
        alone = f"{self.alone_note_count:,} {'note' if self.alone_note_count == 1 else 'notes'} alone"
        if not self.pack_count:
            return alone
        packs = "pack" if self.pack_count == 1 else "packs"
        return f"{alone}, {self.pack_count:,} {packs} holding {self.packed_note_count:,} notes"


class RefreshReport(BaseModel):
    notebook_id: str
    dry_run: bool = False
    notes: list[NoteOutcome] = Field(default_factory=list)
    packs: list[PackOutcome] = Field(default_factory=list, description="The packs of a packed notebook the run "
                                     "planned, with the notes each holds; per-note lines are then for notes alone.")
    pending_deletions_done_count: int = 0
    pending_deletions_left_count: int = 0
    source_count: int = 0
    capacity: int = 0
    capacity_source: str = Field(default="default", description=(
        "Where the capacity comes from: setting (given for this run), remembered (given on an earlier run for "
        "this notebook), learned (the server refused an add as full), plan, held (the smallest plan's that allows "
        "what the notebook holds), default."))
    layout: SourcesLayout | None = Field(default=None, description="How the sources hold the notes after the run.")
    notices: list[str] = Field(default_factory=list, description="What the user should know beyond the notes: "
                               "sources left alone as unmanaged, pauses the server's rate limit imposed.")
    weak_match: bool = Field(default=False, description="`refresh --query`: nothing in the vault matches the query "
                             "well, and no note was refreshed for it.")

    def by_branch(self, branch: Branch) -> list[NoteOutcome]:
        return [n for n in self.notes if n.branch == branch]

    @property
    def failed(self) -> list[NoteOutcome]:
        return self.by_branch(Branch.FAILED)

    @property
    def failed_packs(self) -> list[PackOutcome]:
        return [p for p in self.packs if p.branch == Branch.FAILED]

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for note in self.notes:
            counts[note.branch.value] = counts.get(note.branch.value, 0) + 1
        return counts


def stop_report(exc: NlmsyncError, notebook_id: str, notes: list[NoteOutcome],
                packs: list[PackOutcome] | None = None) -> None:
    """Record on `exc`, which stops a run, the outcomes of the notes (and packs) the run had done and recorded."""
    exc.report = RefreshReport(notebook_id=notebook_id, notes=notes, packs=list(packs or ()))


def stopped_line(said: str, requested: Sequence[object], outcomes: list[NoteOutcome], not_tried: int) -> str:
    """The one line of a run an error stopped: what the error `said`, then what became of the `requested`
    notes — done (live in the notebook), excluded, failed, not tried."""
    counts = {branch: 0 for branch in Branch}
    for outcome in outcomes:
        counts[outcome.branch] += 1
    done = sum(counts[b] for b in (Branch.REUSED, Branch.REPLACED, Branch.RENAMED, Branch.ADDED))
    parts = [f"{done} of {len(requested)} notes done"]
    if counts[Branch.EXCLUDED]:
        parts.append(f"{counts[Branch.EXCLUDED]} excluded")
    parts.append(f"{counts[Branch.FAILED] - not_tried} failed")
    parts.append(f"{not_tried} not tried")
    return f"{said}; {', '.join(parts)}"


def notes_done(exc: NlmsyncError) -> list[NoteOutcome]:
    """The outcomes `exc` carries of the run it stopped (none when it stopped before any note)."""
    return list(exc.report.notes) if isinstance(exc.report, RefreshReport) else []


def packs_done(exc: NlmsyncError) -> list[PackOutcome]:
    """The pack outcomes `exc` carries of the run it stopped."""
    return list(exc.report.packs) if isinstance(exc.report, RefreshReport) else []
