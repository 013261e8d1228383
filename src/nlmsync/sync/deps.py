"""What a run works with (`SyncDeps`), and the client it drives (`SyncClient`: the six calls sync makes, so sync
imports nothing of `notebooklm`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    FileOutsideServerFoldersError,
    ServerCommandNotFoundError,
    ServerUnreachableError,
)
from nlmsync.sync.capacity import Capacity, KnownCapacity, decide_capacity
from nlmsync.sync.report import NoteOutcome, PackOutcome

if TYPE_CHECKING:
    from nlmsync.store import StateStore


class ListedSource(Protocol):
    """One source of a `notebook_get` answer."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...


class ListedNotebook(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def source_count(self) -> int: ...


class NotebookListing(Protocol):
    """A `notebook_get` answer: the notebook and its sources."""

    @property
    def notebook(self) -> ListedNotebook: ...
    @property
    def sources(self) -> Sequence[ListedSource]: ...


class AddedSourceId(Protocol):
    """A `source_add` answer: the new source's id."""

    @property
    def source_id(self) -> str: ...


class HeldText(Protocol):
    """A `source_get_content` answer: the text the server holds for a source."""

    @property
    def content(self) -> str: ...


class SyncClient(Protocol):
    """What sync needs of the NotebookLM client (`notebooklm.NotebookLMClient` is one). Every call raises
    `NotebookLMError` subclasses only (`ConnectionProblem` when the answer may have been lost)."""

    async def notebook_get(self, notebook_id: str) -> NotebookListing: ...
    async def source_add_text(self, notebook_id: str, text: str, title: str,
                              wait: bool | None = None) -> AddedSourceId: ...
    async def source_add_file(self, notebook_id: str, file_path: str, title: str) -> AddedSourceId: ...
    async def source_delete(self, source_id: str) -> object: ...
    async def source_rename(self, notebook_id: str, source_id: str, new_title: str) -> object: ...
    async def source_get_content(self, source_id: str) -> HeldText: ...


ProgressCallback = Callable[[NoteOutcome | PackOutcome], None]
PhaseCallback = Callable[[str, int], None]
ReadingCallback = Callable[[int, int], None]

# Errors that doom every remaining call of the run: stop instead of failing note after note (a server that may not
# read the folder the run uploads files from refuses every file alike).
FATAL_ERRORS = (AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError,
                FileOutsideServerFoldersError)


@dataclass
class SyncDeps:
    """What source preparation works with: the server, the registry, the vault and the settings."""

    client: SyncClient
    store: StateStore
    vault_root: Path
    settings: Settings
    notebook_id: str
    on_progress: ProgressCallback | None = None
    on_phase: PhaseCallback | None = None
    """Told when a run starts a phase of its own (uploading packs) and how many steps it takes."""
    on_reading: ReadingCallback | None = None
    """Told how many of the run's notes were read (or found unchanged) so far, of how many, while it reads them."""
    max_words: int = 0
    max_bytes: int = 0
    """The limits one source is held to (notes are split, packs filled within them); 0 takes the settings'
    `source_max_words` and `source_max_bytes`."""
    decided: InitVar[Capacity | None] = None
    """The capacity the run decided (`capacity.decide_capacity`); None: decided from what the settings and the
    state file know of the notebook."""
    capacity: Capacity = field(init=False)
    """How many sources the notebook may hold, and why; lowered when the server refuses an add as full
    (`Capacity.refused_at`)."""

    def __post_init__(self, decided: Capacity | None) -> None:
        self.max_words = self.max_words or self.settings.source_max_words
        self.max_bytes = self.max_bytes or self.settings.source_max_bytes
        self.capacity = decided if decided is not None else decide_capacity(
            KnownCapacity.read(self.store, self.notebook_id, self.settings))

    def progress(self, outcome: NoteOutcome | PackOutcome) -> None:
        if self.on_progress is not None:
            self.on_progress(outcome)

    def phase(self, label: str, total: int) -> None:
        if self.on_phase is not None:
            self.on_phase(label, total)

    def reading(self, done: int, total: int) -> None:
        if self.on_reading is not None:
            self.on_reading(done, total)
