"""A run's attachments (`AttachmentRun`): read and decided before anything changes in the notebook (so the notes'
`refresh --all` knows which paths they keep and which vanished paths their renames claim), then carried out
through the executor after the notes, their titles checked against a fresh listing."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from nlmsync import vault as vault_files
from nlmsync.documents.model import OVER_WORDS
from nlmsync.errors import NlmsyncError
from nlmsync.sync.attachments.files import FileReader, PreparedFile
from nlmsync.sync.attachments.units import UNPROCESSED_REASON, AttachmentUnit, FilesAlone, PlannedFile, outcome
from nlmsync.sync.branches import Branch
from nlmsync.sync.carry.executor import Executor
from nlmsync.sync.prepared import is_document
from nlmsync.sync.registry import RegistryView, decide_in_order
from nlmsync.sync.remote import RemoteView, lookup_after_lost_answer
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import SyncRun


NO_PACKED_ROOM = "no room: the packs and the sources that stay take the notebook's capacity less 'pack_free'"


def decide_files(files: Sequence[PreparedFile | NoteOutcome], remote: RemoteView, registry: RegistryView,
                 vault_root: Path, settled: Mapping[str, str]) -> list[PlannedFile | NoteOutcome]:
    """Each attachment with its branch (`registry.decide_in_order` over the hash of its bytes), in order (outcomes
    pass through), and the registry title of the row it keeps (its own, or a renamed path's); a file `settled` (path
    -> the id of the source it keeps as it is) is its reused outcome at once."""
    prepared = [f for f in files if isinstance(f, PreparedFile) and f.path not in settled]
    decisions = iter(decide_in_order([(f.path, (f.content_hash,)) for f in prepared], remote.ids(), registry,
                                     vault_root, taken=settled))
    items: list[PlannedFile | NoteOutcome] = []
    for file in files:
        if isinstance(file, NoteOutcome):
            items.append(file)
            continue
        source_id = settled.get(file.path)
        if source_id is not None:
            items.append(NoteOutcome(path=file.path, branch=Branch.REUSED, source_ids=[source_id]))
            continue
        decision = next(decisions)
        rows = registry.mappings(decision.rename_from if decision.rename_from is not None else file.path)
        items.append(PlannedFile(file, decision, rows[0].row.title if len(rows) == 1 else None))
    return items


class AttachmentRun:
    """The attachments of one run: `decide` before the notes are carried out, `carry_out` after them."""

    def __init__(self, run: SyncRun, paths: Sequence[str], found: Collection[str],
                 stats: Mapping[str, tuple[int, int]] | None = None) -> None:
        self.run = run
        self.paths = list(paths)
        self.found = found
        self.stats = stats
        self.reader = FileReader(run.deps, dry_run=run.dry_run)
        self.prepared: list[PreparedFile | NoteOutcome] | None = None
        """The files hashed (`prepare`), once."""
        self._kept: dict[str, str] | None = None
        self.items: list[PlannedFile | NoteOutcome] = []

    def close(self) -> None:
        self.reader.close()

    def prepare(self) -> list[PreparedFile | NoteOutcome]:
        """The files hashed (not read when their hash is known), or outcomes; those whose bytes the server could not
        process before are excluded."""
        if self.prepared is None:
            self.prepared = self._unprocessed(self.reader.load(self.paths, self.found, self.stats))
        return self.prepared

    def kept_as_is(self) -> dict[str, str]:
        """The prepared files kept as the sources they have, with nothing to carry out but their use (path -> source
        id): the path's one registry row holds these bytes under the title they give now, and the run's listing
        holds its source by the id the row stores. Such a file is neither read, nor decided, nor carried out. Found
        once; a source the listing has lost since (the run's packs made room) is not kept any more."""
        listed = self.run.remote.sources
        if self._kept is None:
            registry = self.run.registry
            self._kept = {}
            for file in self.prepare():
                if not isinstance(file, PreparedFile):
                    continue
                rows = registry.mappings(file.path)
                if len(rows) != 1:
                    continue
                row, source_id = rows[0]
                if (source_id == row.source_id and source_id in listed and row.content_hash == file.content_hash
                        and row.title == file.title):
                    self._kept[file.path] = source_id
        elif not all(source_id in listed for source_id in self._kept.values()):
            self._kept = {path: source_id for path, source_id in self._kept.items() if source_id in listed}
        return self._kept

    def candidates(self) -> list[tuple[str, bool]]:
        """The files that can be sources, each with whether it has text (a document with no text layer has
        none, nor has an image)."""
        textless = set(self.reader.texts.textless())
        return [(f.path, f.document.has_text if f.document is not None else f.path not in textless)
                for f in self.prepare() if isinstance(f, PreparedFile)]

    def too_long(self, settled: Collection[str] = ()) -> list[str]:
        """The documents whose text is over the words one source holds (`SyncDeps.max_words`: NotebookLM's 500,000,
        or the `source_max_words` setting when lower): the server would refuse or cut such a file, so its text goes
        up instead, by pages, as the parts of a long note do (`prepared.split_pages`). Each new one is said in the
        run's notices. A file kept as the file source it has, or `settled` in its pack, is not read for this; the
        others' texts come from the state file when their bytes were read before."""
        run, limit = self.run, self.run.deps.max_words
        kept_as_is = self.kept_as_is()
        long: list[str] = []
        for file in self.prepare():
            if (not isinstance(file, PreparedFile) or file.path in kept_as_is or file.path in settled
                    or not is_document(file.path)):
                continue
            rows = run.registry.mappings(file.path)
            parts = any(r.row.part_count > 1 for r in rows)
            kept = len(rows) == 1 and rows[0].row.content_hash == file.content_hash and rows[0].source_id in run.remote
            if file.document is None and (kept or self.reader.read(file) is not None):
                continue
            document = file.document
            if document is None or not document.has_text or document.words <= limit:
                continue
            long.append(file.path)
            if not parts:
                run.report.notices.append(f"{file.path}: {OVER_WORDS.format(words=document.words, limit=limit)}")
        return long

    def hand_over(self, paths: Collection[str]) -> None:
        """Leave `paths` to the packs: the run's attachments are the others."""
        if not paths:
            return
        self.paths = [p for p in self.paths if p not in paths]
        self.prepared = [f for f in self.prepare() if f.path not in paths]

    def decide(self) -> None:
        """Decide each file's branch (`prepare`d), and read those to upload (a file that cannot be a source becomes
        an outcome that says why)."""
        run = self.run
        run.registry.preload(self.paths)
        files = self.prepare()
        decided = decide_files(files, run.remote, run.registry, run.deps.vault_root, self.kept_as_is())
        self.reader.expect(i.file for i in decided if isinstance(i, PlannedFile) and i.needs_upload())
        for i, item in enumerate(decided):
            if isinstance(item, PlannedFile) and item.needs_upload():
                refused = self.reader.read(item.file)
                if refused is not None:
                    decided[i] = self.reader.refused(item.file, refused, named=item.path not in self.found)
        self.items = self._within_packed_room(decided)

    def _within_packed_room(self, items: list[PlannedFile | NoteOutcome]) -> list[PlannedFile | NoteOutcome]:
        """In a packed notebook, the uploads that fit the room the packs leave (the capacity less `pack_free`), in
        order; the others left out, said as such. A notebook of single notes makes room by eviction instead."""
        deps = self.run.deps
        if not deps.store.has_packs(deps.notebook_id):
            return items
        room = deps.capacity.value - deps.settings.pack_free - len(self.run.remote)
        kept: list[PlannedFile | NoteOutcome] = []
        for item in items:
            if isinstance(item, PlannedFile) and item.decision.branch == Branch.ADDED:
                if room <= 0:
                    kept.append(NoteOutcome(path=item.path, branch=Branch.EXCLUDED, reason=NO_PACKED_ROOM))
                    continue
                room -= 1
            kept.append(item)
        return kept

    def _unprocessed(self, files: list[PreparedFile | NoteOutcome]) -> list[PreparedFile | NoteOutcome]:
        """`files`, those whose bytes the notebook's server could not process before said so instead (excluded)."""
        deps = self.run.deps
        known = deps.store.unprocessed(deps.notebook_id, [f.content_hash for f in files
                                                          if isinstance(f, PreparedFile)])
        if not known:
            return files
        return [NoteOutcome(path=f.path, branch=Branch.EXCLUDED, reason=UNPROCESSED_REASON)
                if isinstance(f, PreparedFile) and f.content_hash in known else f for f in files]

    def kept(self) -> set[str]:
        """The registered paths this run answers for as attachments: its files, and the paths their renames take."""
        kept = set(self.paths)
        kept.update(i.decision.rename_from for i in self.items
                    if isinstance(i, PlannedFile) and i.decision.rename_from is not None)
        return kept

    async def carry_out(self) -> None:
        """Carry the decided attachments out through an executor of their own, their outcomes added to the run's
        report in order (also when the run stops part-way), then fix the titles the notebook lists otherwise.

        Raises:
            CapacityError: the notebook is full (no managed eviction candidate, or the server refused an add).
            NlmsyncError: the server cannot be used, or the state file cannot be written (the run stopped).
        """
        run = self.run
        if run.dry_run:
            run.report.notes.extend(i if isinstance(i, NoteOutcome) else outcome(i, list(i.decision.keep))
                                    for i in self.items)
            return
        files = FilesAlone(run.deps, run.remote)
        places: list[list[NoteOutcome]] = [[] for _ in self.items]
        units: list[AttachmentUnit] = []
        for item, place in zip(self.items, places, strict=True):  # an outcome decided before is said now
            if isinstance(item, PlannedFile):
                units.append(AttachmentUnit(files, item, place))
                continue
            place.append(item)
            run.deps.progress(item)
        executor: Executor[AttachmentUnit] = Executor(run.deps, run.remote, run.protect)
        try:
            stop = await executor.execute(units)
            if stop is not None:
                raise stop
        finally:
            files.links.clear()
            run.report.notes.extend(o for place in places for o in place)
        await self._fix_titles(files, units)

    async def _fix_titles(self, files: FilesAlone, units: list[AttachmentUnit]) -> None:
        """Check the titles of the files the run carried out (a file reused as it is has the title it should)."""
        live = [u.work for u in units if u.live]
        uploaded = [w.path for w in live if w.needs_upload()]
        retitle = [w.path for w in live if not w.needs_upload() and w.needs_retitle()]
        if not uploaded and not retitle:
            return
        listed: dict[str, str] = {}
        if uploaded:  # the server applies a file's title by a rename that may not take: its listing says
            try:
                listed = await lookup_after_lost_answer(self.run.deps.client, self.run.deps.notebook_id)
            except NlmsyncError:
                return
        await files.fix_titles([*uploaded, *retitle], listed=listed)
