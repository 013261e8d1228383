"""What levelling judges an unknown source by, and records as it goes (`Evidence`): the vault's notes as they
are now (walked once, read when a claim needs them) and the server's word on a source (read back: only what is
proven nlmsync's is ever deleted)."""

from __future__ import annotations

from collections.abc import Sequence

from nlmsync import vault as vault_files
from nlmsync.store import NoteHashes
from nlmsync.sync.prepared import PACKABLE_SUFFIXES, PreparedNote, load_notes
from nlmsync.sync.remote import RemoteView, read_back
from nlmsync.sync.report import Levelled
from nlmsync.sync.run import SyncDeps
from nlmsync.sync.titles import shown_path_matches


class Evidence:
    """The vault and the server as levelling reads them for one run, and what it did (`done`)."""

    def __init__(self, deps: SyncDeps, remote: RemoteView, done: Levelled) -> None:
        self.deps = deps
        self.remote = remote
        self.done = done
        self._vault: list[str] | None = None
        self.stats: dict[str, tuple[int, int]] = {}
        """The modification time and size of each note's file, as the walk found them."""
        self._notes: dict[str, PreparedNote | None] = {}

    def vault_paths(self) -> list[str]:
        """The vault's notes and documents, sorted (walked once, when a pack or a shortened title needs them)."""
        if self._vault is None:
            listing = vault_files.list_vault(self.deps.vault_root, PACKABLE_SUFFIXES)  # documents may be packed
            self.stats = {p: (m, s) for p, m, s in zip(listing.paths, listing.mtimes, listing.sizes, strict=True)}
            self._vault = sorted(listing.paths)
        return self._vault

    def resolve(self, shown: str) -> str | None:
        """The vault path a title shows (a long one shortened to its end), None when the vault has none, or more
        than one it could be."""
        if not shown.startswith("…"):
            return shown
        found = [p for p in self.vault_paths() if shown_path_matches(shown, p)]
        return found[0] if len(found) == 1 else None

    def load(self, paths: Sequence[str]) -> None:
        """Read the notes of `paths` not read yet (a note excluded, empty or unreadable becomes None), recording
        what each hashes to, so the run does not read them again."""
        wanted = [p for p in dict.fromkeys(paths) if p not in self._notes]
        if not wanted:
            return
        read: list[NoteHashes] = []
        items = load_notes(self.deps, wanted, set(wanted), None, read, self.stats or None)
        for path, item in zip(wanted, items, strict=True):
            self._notes[path] = item if isinstance(item, PreparedNote) else None
        self.deps.store.record_note_hashes(read)

    def note(self, path: str) -> PreparedNote | None:
        self.load([path])
        return self._notes[path]

    async def proven(self, source_id: str, title: str, text: str | None = None) -> bool | None:
        """Whether the source holds what its nlmsync `title` says (or `text`), read back (`remote.read_back`); one
        that does not is a look-alike, remembered and never touched."""
        verdict = await read_back(self.deps.client, source_id, title, text)
        if verdict is False:
            self.done.lookalikes[source_id] = title
            self.remote.foreign[source_id] = title
        return verdict

    def retire(self, source_id: str, reason: str) -> None:
        """Queue the source for deletion (the run's pending deletions delete it)."""
        with self.deps.store.step():
            self.deps.store.queue_deletion(self.deps.notebook_id, source_id, reason)
        self.done.retired.append(source_id)
