"""What the orchestrator's runs answer, as pydantic models: `ask`'s `AskResult` (with its citations),
`status`'s `StatusReport`, `sources`' `SourcesReport` and `reconcile`'s `ReconcileReport`. The CLI prints them (one JSON document with
`--json`) and `serve` returns them as tool results; `refresh` answers with sync's `RefreshReport`."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from nlmsync import vault as vault_files
from nlmsync.documents import UNIT_OF_SUFFIX
from nlmsync.notebooklm import Usage
from nlmsync.sync import CapacitySource, NoteOutcome, PackOutcome, RefreshReport, SourcesLayout


class Citation(BaseModel):
    """One citation of an answer, mapped back to the vault note (and heading) it came from."""

    number: int
    source_id: str
    path: str | None = Field(default=None, description="The note cited; for a pack, the note of the pack that "
                             "holds the quoted text (None when it could not be placed).")
    heading: str | None = None
    cited_text: str | None = None
    pack: str | None = Field(default=None, description="The title of the pack cited, when the source is a pack.")
    located: bool | None = Field(default=None, description="Whether the quoted text was found in the note (None "
                                 "when the server quoted nothing or the note cannot be read).")
    page: int | None = Field(default=None, description="For an attachment: the page of a PDF (the slide of a "
                             "presentation, the section of a Word file or a book) where the quoted text begins, "
                             "from 1; None for a note, or when the quote was not found.")

    @property
    def place(self) -> str | None:
        """Where in the attachment the quote is, in words (`page 7`, `slide 3`), or None."""
        if self.page is None or self.path is None:
            return None
        return f"{UNIT_OF_SUFFIX.get(vault_files.suffix_of(self.path), 'part')} {self.page}"


class SelectedNote(BaseModel):
    """A note `ask` sent to NotebookLM, as its result reports it: the path and score of a `search.SearchHit`
    the selection rule (`search.selection.select_notes`) picked."""

    path: str
    score: float


class AskResult(BaseModel):
    notebook_id: str
    question: str
    answer: str
    conversation_id: str | None
    continued: bool = Field(default=False, description="The question followed up an earlier conversation (the one "
                            "given, or the latest, which the question's notes overlap); false: a new one.")
    selected_notes: list[SelectedNote] = Field(default_factory=list)
    source_ids: list[str] = Field(default_factory=list, description="Selected notes' sources, then carry-over.")
    carried_over_source_ids: list[str] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    notes: list[NoteOutcome] = Field(default_factory=list, description="What source preparation did.")
    packs: list[PackOutcome] = Field(default_factory=list, description="The packs holding selected notes.")
    notices: list[str] = Field(default_factory=list)
    weak_match: bool = Field(default=False, description="Nothing in the vault matches the question well: no note "
                             "was selected or uploaded, and the question went to the notebook as it is.")
    question_language: str | None = Field(default=None, description="The language the question was told to be in "
                                          "(notes in it are preferred), when the vault has several.")
    saved_path: str | None = Field(default=None, description="Where `ask --save` wrote the answer in the vault.")


class SourceMappingEntry(BaseModel):
    """A source mapping (one registry row) as `status` reports it, its source id resolved."""

    path: str
    part: int
    part_count: int
    source_id: str
    title: str
    managed: bool
    kind: Literal["note", "attachment"] = Field(default="note", description="A note, or an attachment (a file "
                                                "source: a PDF, a document, an image …).")


class LocalChangeEntry(BaseModel):
    """A synced note that changed in the vault: modified, renamed (to `renamed_to`), deleted or excluded."""

    path: str
    change: str
    renamed_to: str | None = None
    command: str = Field(description="The command that brings its source up to date.")


class EvictionCandidate(BaseModel):
    path: str
    use_count: int
    last_used: str | None = None


class EvictionEntry(BaseModel):
    path: str
    source_id: str
    reason: str
    evicted_at: str


class NextStep(BaseModel):
    """Something `status` found to do, and the command that does it."""

    why: str
    command: str


class PackEntry(BaseModel):
    """A pack (a source holding many notes) as `status` reports it."""

    title: str
    source_id: str
    first_path: str
    last_path: str
    note_count: int
    byte_count: int = Field(description="Bytes of text.")
    live: bool = Field(description="Whether the notebook holds its source.")


class NotePlacement(BaseModel):
    """Where one note is in the notebook: in a pack, alone (its own source, or parts), missing (its source is
    gone from the notebook) or not synced; for a path nlmsync never synced, why: no such note, a folder, excluded
    (`reason` says how), or not synced (`reason`: what keeps it out, such as `empty`, or none)."""

    path: str
    where: str
    source_ids: list[str] = Field(default_factory=list)
    pack: str | None = Field(default=None, description="The title of the pack holding the note.")
    reason: str | None = Field(default=None, description="Why a note is excluded or cannot be synced.")


class StatusReport(BaseModel):
    server: str = Field(description="The NotebookLM MCP server read: the server setting ('fake', a command line, a URL).")
    notebook_id: str
    title: str
    capacity: int
    capacity_source: CapacitySource = Field(default=CapacitySource.DEFAULT,
                                 description=RefreshReport.model_fields["capacity_source"].description)
    plan: str | None = Field(default=None, description="The plan of the tier: Standard, Plus, Pro or Ultra.")
    allowance: Usage | None = Field(default=None, description="The plan's usage allowance (null: the server does not say).")
    source_count: int = Field(description="Sources the notebook holds now.")
    layout: SourcesLayout | None = Field(default=None, description="How the sources hold the notes.")
    packs: list[PackEntry] = Field(default_factory=list)
    notes: list[NotePlacement] = Field(default_factory=list, description="Where each note asked about is.")
    active_sources: list[SourceMappingEntry] = Field(default_factory=list)
    stale_sources: list[SourceMappingEntry] = Field(default_factory=list,
                                               description="Synced notes whose source is gone from the notebook.")
    orphan_source_ids: list[str] = Field(default_factory=list,
                                         description="Remote sources titled by nlmsync, unregistered.")
    unmanaged_count: int = Field(default=0, description="Remote sources nlmsync did not upload (never evicted).")
    attachment_count: int = Field(default=0, description="Attachments live in the notebook, each its own source.")
    attachment_bytes: int = Field(default=0, description="The size of those attachments' files in the vault.")
    local_changes: list[LocalChangeEntry] = Field(default_factory=list,
                                                  description="Synced notes changed in the vault, not synced yet.")
    next_evictions: list[EvictionCandidate] = Field(default_factory=list,
                                                    description="The first notes evicted when room is needed.")
    pending_deletions: list[str] = Field(default_factory=list, description="Source ids still to delete.")
    recent_evictions: list[EvictionEntry] = Field(default_factory=list)
    next_steps: list[NextStep] = Field(default_factory=list)
    notices: list[str] = Field(default_factory=list, description="What bringing the state file level with the "
                               "notebook did: sources another device or an interrupted run uploaded, taken as this "
                               "vault's (nothing to upload again), and copies deleted.")


class ReconcileReport(BaseModel):
    notebook_id: str
    active_count: int
    stale_paths: list[str] = Field(default_factory=list)
    canonicalized_paths: list[str] = Field(default_factory=list)
    orphan_source_ids: list[str] = Field(default_factory=list)



class NotebookSource(BaseModel):
    """One source of the notebook as `sources` lists it: what it holds, and whether nlmsync put it there."""

    source_id: str
    title: str
    kind: str = Field(description="pack (many notes), note (one note, or one part of a split note), attachment (one "
                                  "of the vault's files: a PDF, a document, an image …), orphan (an nlmsync title "
                                  "the state file does not know) or unmanaged (not uploaded by nlmsync).")
    path: str | None = Field(default=None, description="A note's path.")
    part: int | None = Field(default=None, description="Which part of a split note, from 0.")
    part_count: int | None = None
    first_path: str | None = Field(default=None, description="A pack's first note.")
    last_path: str | None = Field(default=None, description="A pack's last note.")
    note_count: int | None = Field(default=None, description="The notes a pack holds.")
    byte_count: int | None = Field(default=None, description="Bytes of a pack's text, or of an attachment's file.")


class SourcesReport(BaseModel):
    notebook_id: str
    title: str
    capacity: int
    source_count: int
    sources: list[NotebookSource] = Field(default_factory=list, description="Packs in path order, then notes alone, "
                                          "orphans and unmanaged sources.")
    pack_count: int = 0
    packed_note_count: int = 0
    alone_count: int = Field(0, description="Sources holding one note, or one part of one.")
    attachment_count: int = Field(0, description="Sources holding one attachment (a file source).")
    orphan_count: int = 0
    unmanaged_count: int = 0
