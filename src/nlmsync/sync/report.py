"""What a refresh did, note by note and pack by pack: `RefreshReport`, which every step of a run adds to, printed
by the command line and returned to the MCP server. An error that stops a run part-way carries it in its
`report`, holding what was done and recorded before."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, computed_field

from nlmsync.sync.branches import LIVE, Branch
from nlmsync.sync.capacity import CapacitySource

NOT_TRIED = "not tried"


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
    not_tried: bool = Field(default=False, description="Failed because the run stopped before trying the note, "
                            "not by an error of its own: counted apart from the failed.")
    pack: str | None = Field(default=None, description="The title of the pack the note is live in, if packed.")

    @property
    def counted_as(self) -> str:
        """What the note counts as in a run's figures: its branch, or `not tried`."""
        return NOT_TRIED if self.not_tried else self.branch.value

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
    capacity_source: CapacitySource = Field(default=CapacitySource.DEFAULT, description=(
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

    @property
    def changed_notebook(self) -> bool:
        """Whether the run added, replaced, removed or tried to (a note or pack not reused, nor excluded)."""
        return any(p.branch != Branch.REUSED for p in self.packs) or \
            any(n.branch not in (Branch.REUSED, Branch.EXCLUDED) for n in self.notes)

    def counted_on(self) -> set[str]:
        """The sources the run's live notes and packs are in."""
        held = {p.source_id for p in self.packs if p.branch.live and p.source_id is not None}
        return held | {sid for n in self.notes if n.branch.live for sid in n.source_ids}

    def add_pass(self, again: RefreshReport, gone: Collection[str]) -> None:
        """Take in one more pass over the same notes (`again`), made because the sources `gone` left the notebook
        while this run ran: what it did replaces the outcomes that counted on them."""
        changed_packs = [p for p in again.packs if p.branch != Branch.REUSED]
        moved = {path for p in changed_packs for path in p.paths}
        self.packs = sorted([p for p in self.packs if p.source_id not in gone and not moved & set(p.paths)]
                            + changed_packs, key=lambda p: p.paths[0] if p.paths else p.title)
        redone = {n.path for n in again.notes if n.branch != Branch.REUSED}
        self.notes = [n for n in self.notes if n.path not in redone and not set(n.source_ids) & set(gone)] + \
            [n for n in again.notes if n.path in redone]

    def counts(self) -> dict[str, int]:
        """The notes by what each counts as (`NoteOutcome.counted_as`): the run's figures, wherever they are
        printed."""
        counts: dict[str, int] = {}
        for note in self.notes:
            counts[note.counted_as] = counts.get(note.counted_as, 0) + 1
        return counts


def stopped_line(said: str, requested: Sequence[object], outcomes: list[NoteOutcome]) -> str:
    """The one line of a run an error stopped: what the error `said`, then what became of the `requested`
    notes — done (live in the notebook), excluded, failed, not tried — counted as the report counts them."""
    counts = RefreshReport(notebook_id="", notes=outcomes).counts()
    done = sum(counts.get(b.value, 0) for b in LIVE)
    parts = [f"{done} of {len(requested)} notes done"]
    if counts.get(Branch.EXCLUDED.value):
        parts.append(f"{counts[Branch.EXCLUDED.value]} excluded")
    parts.append(f"{counts.get(Branch.FAILED.value, 0)} failed")
    parts.append(f"{counts.get(NOT_TRIED, 0)} {NOT_TRIED}")
    return f"{said}; {', '.join(parts)}"


@dataclass
class Levelled:
    """What levelling did: the notes and packs adopted, the sources queued for deletion and the look-alikes."""

    notes: list[str] = field(default_factory=list)
    packs: list[str] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    lookalikes: dict[str, str] = field(default_factory=dict)

    def notice(self) -> str | None:
        """What a run says of it (None when levelling found nothing to adopt or delete)."""
        said = []
        adopted = len(self.notes) + len(self.packs)
        if adopted:
            what = [f"{len(self.packs)} {'pack' if len(self.packs) == 1 else 'packs'}" if self.packs else "",
                    f"{len(set(self.notes))} {'note' if len(set(self.notes)) == 1 else 'notes'}" if self.notes else ""]
            said.append(f"adopted {adopted} {'source' if adopted == 1 else 'sources'} the state file did not know "
                        f"(uploaded by another machine or an interrupted run): {', '.join(w for w in what if w)}")
        if self.retired:
            n = len(self.retired)
            said.append(f"{n} {'copy' if n == 1 else 'copies'} of what the notebook holds elsewhere "
                        f"{'is' if n == 1 else 'are'} deleted")
        return "; ".join(said) or None
