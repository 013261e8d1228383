"""One run of source preparation as a value: `SyncRun`, built once before anything is planned and passed along,
and what a run is asked for (`Request`, `AllNotesScope`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import InitVar, dataclass, field

from nlmsync.store import NoteHashes
from nlmsync.sync.branches import Branch
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import Levelled, RefreshReport


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
