"""`SyncRun`: one run of source preparation, what it works with for its whole length — the server, the registry
and the settings (`deps.SyncDeps`), the notebook as the run read it (`RemoteView`, kept up to date by its own adds
and deletes), the registry read once (`RegistryView`), the note hashes it read (recorded with the run's uses), the
notes it never evicts, and whether it only says what it would do."""

from __future__ import annotations

from dataclasses import dataclass, field

from nlmsync.store import NoteHashes
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.registry import RegistryView
from nlmsync.sync.remote import RemoteView


@dataclass
class SyncRun:
    deps: SyncDeps
    remote: RemoteView
    registry: RegistryView
    protect: set[str] = field(default_factory=set)
    """Paths never evicted by this run (the notes it makes live among them)."""
    dry_run: bool = False
    read: list[NoteHashes] = field(default_factory=list)
    """The notes read so far, as `note_hashes` records to keep."""


@dataclass(frozen=True)
class AllNotesScope:
    """What a `refresh --all [PATH…]` run answers for: the registered notes under `roots`
    (vault-relative folders or notes; "" is the whole vault). Their sources are removed when the note
    left the vault or became excluded; registered notes outside the scope are left alone."""

    roots: tuple[str, ...] = ("",)

    def covers(self, path: str) -> bool:
        return any(root in ("", path) or path.startswith(root.rstrip("/") + "/") for root in self.roots)
