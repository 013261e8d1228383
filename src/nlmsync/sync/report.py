"""What a refresh did, note by note: the models printed by the CLI and returned to the MCP server.

An error that stops a run part-way carries what was done and recorded before it as a `RefreshReport` in
its `report` (`stop_report`, read back with `notes_done`), from sync up to the command line."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field, computed_field

from nlmsync.errors import NlmsyncError
from nlmsync.sync.plan import Branch


class NoteOutcome(BaseModel):
    """One note (or, for evictions and removals, one vault path whose sources left the notebook)."""

    path: str
    branch: Branch
    source_ids: list[str] = Field(default_factory=list)
    previous_source_ids: list[str] = Field(default_factory=list)
    part_count: int = 1
    renamed_from: str | None = None
    adopted: bool = Field(default=False, description="An existing remote source with the exact title was taken.")
    reason: str | None = None
    error: str | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def split(self) -> bool:
        """The note went up as several numbered parts."""
        return self.part_count > 1


class RefreshReport(BaseModel):
    notebook_id: str
    dry_run: bool = False
    notes: list[NoteOutcome] = Field(default_factory=list)
    pending_deletions_done_count: int = 0
    pending_deletions_left_count: int = 0
    source_count: int = 0
    capacity: int = 0
    notices: list[str] = Field(default_factory=list, description="What the user should know beyond the notes: "
                               "sources left alone as unmanaged, pauses the server's rate limit imposed.")

    def by_branch(self, branch: Branch) -> list[NoteOutcome]:
        return [n for n in self.notes if n.branch == branch]

    @property
    def failed(self) -> list[NoteOutcome]:
        return self.by_branch(Branch.FAILED)

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for note in self.notes:
            counts[note.branch.value] = counts.get(note.branch.value, 0) + 1
        return counts


def stop_report(exc: NlmsyncError, notebook_id: str, notes: list[NoteOutcome]) -> None:
    """Record on `exc`, which stops a run, the outcomes of the notes the run had done and recorded."""
    exc.report = RefreshReport(notebook_id=notebook_id, notes=notes)


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
