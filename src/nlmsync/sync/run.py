"""One run of source preparation: what it works with (`SyncDeps`: the client, the state file, the vault, the
settings, the capacity decided), its state built once before anything is planned and passed along (`SyncRun`),
and what it is asked for (`Request`, `AllNotesScope`)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync.config import Settings
from nlmsync.errors import (
    AuthenticationRequiredError,
    FileOutsideServerFoldersError,
    ServerCommandNotFoundError,
    ServerUnreachableError,
)
from nlmsync.store import NoteHashes
from nlmsync.sync.branches import Branch
from nlmsync.sync.capacity import Capacity, KnownCapacity, decide_capacity
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView, SyncClient
from nlmsync.sync.report import Levelled, NoteOutcome, PackOutcome, RefreshReport

if TYPE_CHECKING:
    from nlmsync.store import StateStore


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


@dataclass
class SyncRun:
    """What one run works with for its whole length: the server, the state file and the settings (`deps`, with the
    capacity decided for the run), the notebook as the run read it (`remote`, kept up to date by the run's own
    adds and deletes), what levelling the state file with it did (`levelled`), the report every step adds to,
    and whether the run only says what it would do."""

    deps: SyncDeps
    remote: RemoteView
    dry_run: bool = False
    levelled: Levelled = field(default_factory=Levelled)
    report_to: InitVar[RefreshReport | None] = None
    """The report the run adds to (None: a report of its own)."""
    report: RefreshReport = field(init=False)
    registry: RegistryView = field(init=False)
    """The registry read once (`RegistryView.preload`)."""
    protect: set[str] = field(default_factory=set)
    """Paths never evicted by this run (the notes it makes live among them)."""
    read: list[NoteHashes] = field(default_factory=list)
    """The notes read so far, as `note_hashes` records to keep."""
    files_alone: set[str] = field(default_factory=set)
    """The attachments the run keeps as file sources: never laid out into a pack."""
    file_room: int = 0
    """Sources the packs' layout leaves for the attachments the run is to upload (when the rule keeps them all as
    files, `packs.documents`; else they take the room the packs leave)."""

    def __post_init__(self, report_to: RefreshReport | None) -> None:
        self.report = report_to if report_to is not None else RefreshReport(notebook_id=self.deps.notebook_id,
                                                                             dry_run=self.dry_run)
        self.registry = RegistryView(self.deps.store, self.deps.notebook_id)

    def record_uses(self, used: Sequence[str], forget: Collection[str] = ()) -> None:
        """Record, in one step, the uses of the notes the run made live alone (`used`, in order: what eviction
        reads) with the hash records of the notes it read, and forget those of `forget` (paths that left)."""
        if not used and not self.read and not forget:
            return
        store = self.deps.store
        with store.step():
            store.mark_used(self.deps.notebook_id, used)
            store.record_note_hashes(self.read, forget)

    def mark_adopted(self) -> None:
        """The notes and packs the run reused because levelling took them from the notebook say so (`adopted`)."""
        paths, ids = set(self.levelled.notes), set(self.levelled.packs)
        if not paths and not ids:
            return
        for note in self.report.notes:
            if note.branch == Branch.REUSED and note.path in paths:
                note.adopted = True
        for pack in self.report.packs:
            if pack.branch == Branch.REUSED and pack.source_id in ids:
                pack.adopted = True


@dataclass(frozen=True)
class AllNotesScope:
    """What a `refresh --all [PATH…]` run answers for: the registered notes under `roots`
    (vault-relative folders or notes; "" is the whole vault). Their sources are removed when the note
    left the vault or became excluded; registered notes outside the scope are left alone."""

    roots: tuple[str, ...] = ("",)

    def covers(self, path: str) -> bool:
        return any(root in ("", path) or path.startswith(root.rstrip("/") + "/") for root in self.roots)

    @property
    def whole_vault(self) -> bool:
        return "" in self.roots


@dataclass(frozen=True)
class Request:
    """What one run is asked to make live: `paths` (vault-relative, each once, in order); which of them a walk of
    the vault `found` rather than the user naming them (an unreadable one is passed over, not failed); the
    modification time and size the walk found files with (`stats`, taken instead of a `stat` of their own); and,
    for `refresh --all`, the part of the vault it answers for (`all_notes`)."""

    paths: list[str]
    found: Collection[str] = ()
    stats: Mapping[str, tuple[int, int]] | None = None
    all_notes: AllNotesScope | None = None

    @property
    def whole_vault(self) -> bool:
        """A `refresh --all` of the whole vault."""
        return self.all_notes is not None and self.all_notes.whole_vault
