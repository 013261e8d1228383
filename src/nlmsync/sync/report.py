"""What a refresh did, note by note: the models printed by the CLI and returned to the MCP server."""

from __future__ import annotations

from pydantic import BaseModel, Field, computed_field

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
