"""`ensure_sources_for_paths`, source preparation's entry: make exactly the given notes live sources in a notebook.

A run, in order: read and hash the notes, load their source mappings and resolve the alias chains
(`decide.load_notes`, `decide.RegistryView`); when the notebook is packed — or a `refresh --all` finds the
vault does not fit one note per source (the `pack` setting) — keep the notes that fit a pack in packs
(`packs.ensure_packs`: layout, the branches per pack, add first, retire after); then the notes that stay
alone, each taking one branch — reuse, replace add-first, rename by hash, or new (`decide.decide_all`,
`plan.decide_branch`): screen unregistered sources titled like the run's parts (`identity`); refuse up front
what cannot fit (`decide.check_capacity_up_front`); with `--all`, take out the sources of notes that left the
vault (`all_notes`); then carry the branches out, evicting before the uploads that need room
(`runner.Runner`), or in a dry run say what would be done (`runner.simulate`).

A note that fails is reported and leaves its previous registry rows untouched; the rest go on.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from nlmsync import vault as vault_files
from nlmsync.errors import NlmsyncError
from nlmsync.store import NoteHashes, PackRecord
from nlmsync.sync.carry.vanished import remove_vanished
from nlmsync.sync.deps import SyncDeps
from nlmsync.sync.notes.decide import (
    PlannedNote,
    check_capacity_up_front,
    decide_all,
    read_for_upload,
    untouchable_count,
    vanished_paths,
)
from nlmsync.sync.notes.units import Runner, simulate
from nlmsync.sync.packs.ensure import PackScope, ensure_packs
from nlmsync.sync.packs.outcomes import PackRun, held_pack_outcome
from nlmsync.sync.packs.plan import Group, PlannedPack, packable, packed_notes, packs_in_reach
from nlmsync.sync.prepared import PreparedNote, load_notes, split_limits
from nlmsync.sync.registry import STALE_HASH, RegistryView
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.report import NoteOutcome, PackOutcome, notes_done, packs_done, stop_report
from nlmsync.sync.run import AllNotesScope, SyncRun


@dataclass
class PreparedSources:
    """What a run made of its notes: one outcome per note (packed notes in their packs), and the packs."""

    notes: list[NoteOutcome] = field(default_factory=list)
    packs: list[PackOutcome] = field(default_factory=list)


async def ensure_sources_for_paths(deps: SyncDeps, paths: Sequence[str], remote: RemoteView, *,
                                   protect: set[str] | None = None, dry_run: bool = False,
                                   found: Collection[str] = (),
                                   all_notes: AllNotesScope | None = None,
                                   stats: Mapping[str, tuple[int, int]] | None = None) -> PreparedSources:
    """Make the notes at `paths` (vault-relative, normalized) live sources, in that order.

    Returns one outcome per path (reused, replaced, renamed, added, excluded or failed), with the
    evictions each note needed just before it; in a packed notebook the packs too, and a packed note's
    outcome names its pack (`refresh --all` reports its packed notes through the packs alone). `protect`
    are paths never evicted by this call (the requested paths always are). With `dry_run`, nothing is
    written and no mutating call is made. `found` are the paths that came from walking the vault rather
    than from the user (see `load_notes`); `stats` the modification time and size a walk of the vault just found
    files with (`load_notes` takes them instead of a `stat` of its own). With `all_notes`, the registered notes in its scope that are
    neither among `paths` nor claimed by a rename of this run, or that are now excluded by configuration,
    have their sources removed first (`removed` outcomes, before the others): renames are matched by content
    hash before any removal is decided, so a moved note keeps its source.

    Raises:
        CapacityError: the requested notes alone exceed the capacity (before any upload), or no managed
            eviction candidate is left (after the notes before it were done and recorded).
        AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError: the server cannot be
            used at all (what was done before is recorded).
        An error raised after some notes were handled carries their outcomes in its `report` (a
            `RefreshReport`, `report.notes_done`).
    """
    store, nb = deps.store, deps.notebook_id
    unique = list(dict.fromkeys(paths))
    packed = store.has_packs(nb)
    settled: set[str] = set()
    if packed and stats is not None and _whole_vault(all_notes) and deps.settings.pack != "never" \
            and not crowded(deps, remote):
        members, recorded = store.pack_members_with_stats(nb, split_limits(deps))
        settled = settled_in_packs(deps, unique, stats, members, recorded, remote)
        unique = [p for p in unique if p not in settled]
    else:
        members = store.pack_members(nb) if packed else {}
    registry = RegistryView.read(store, nb, None if all_notes is not None or packed else unique)
    run = SyncRun(deps, remote, registry, set(protect or ()) | set(paths), dry_run)
    preparation = _Preparation(run, unique, found, all_notes, stats, settled, members)
    items = load_notes(deps, unique, found, preparation.known, run.read, stats)
    done = PreparedSources()
    if _packs_apply(deps, items, remote, registry, all_notes, packed):
        try:
            singles = await preparation.packed(items, done)
        except NlmsyncError as exc:
            stop_report(exc, nb, [*done.notes, *notes_done(exc)], [*done.packs, *packs_done(exc)])
            raise
    else:
        singles = list(items)
    try:
        done.notes.extend(await preparation.singles(singles, items))
    except NlmsyncError as exc:
        stop_report(exc, nb, [*done.notes, *notes_done(exc)], done.packs)
        raise
    return done


def _packs_apply(deps: SyncDeps, items: Sequence[PreparedNote | NoteOutcome], remote: RemoteView,
                 registry: RegistryView, all_notes: AllNotesScope | None, packed: bool) -> bool:
    """Whether the run keeps notes in packs: the notebook is packed already, or `refresh --all` packs it (the
    `pack` setting: always, or — `auto` — when its notes do not fit one per source)."""
    mode = deps.settings.pack
    if all_notes is None:
        return packed
    if mode == "never":
        return packed  # unpacking: the layout takes no note, its packs are retired
    if packed or mode == "always":
        return True
    required = sum(len(i.parts) for i in items if isinstance(i, PreparedNote))
    capacity = deps.capacity
    return required + len(remote) > capacity and required + untouchable_count(remote, registry, ()) > capacity


def crowded(deps: SyncDeps, remote: RemoteView) -> bool:
    """Whether the notebook holds more than its capacity leaves for packs (`pack_free` kept free): the capacity
    was lowered, and the run lays out every pack again, to merge them until they fit."""
    return len(remote) + deps.settings.pack_free > deps.capacity


def settled_in_packs(deps: SyncDeps, paths: Sequence[str], stats: Mapping[str, tuple[int, int]],
                     members: Mapping[str, tuple[str, str]], recorded: Mapping[str, tuple[int, int]],
                     remote: RemoteView) -> set[str]:
    """The notes of `paths` a run need not look at: each in a live pack (`members`) with its file's modification
    time and size (`stats`) those `recorded` with the text its pack holds, and not excluded by the `exclude`
    patterns. What an idle `refresh --all` of a packed notebook costs: a `stat` and a lookup a note, no read and
    no object per note."""
    whole = _whole_packs(deps, members, remote)
    settled = {p for p in paths if (st := stats.get(p)) is not None and recorded.get(p) == st
               and members[p][0] in whole}
    patterns = deps.settings.exclude
    if patterns and settled:
        settled = {p for p in settled if not vault_files.excluded_by_pattern(deps.vault_root, p, patterns)}
    return settled


def _whole_packs(deps: SyncDeps, members: Mapping[str, tuple[str, str]], remote: RemoteView) -> set[str]:
    """The live packs that hold exactly the notes recorded as theirs: not one that gave notes to another pack, or
    that was taken from the notebook at an older version of its notes (its notes are laid out again)."""
    held: dict[str, int] = {}
    for source_id, _ in members.values():
        held[source_id] = held.get(source_id, 0) + 1
    return {r.source_id for r in deps.store.packs(deps.notebook_id)
            if r.source_id in remote and held.get(r.source_id) == r.note_count and r.content_hash != STALE_HASH}


class _Preparation:
    """What one run of `ensure_sources_for_paths` looks at beyond its `SyncRun`: the notes it was asked for
    (`requested`), those a walk of the vault found, the scope of `refresh --all`, the files' stats a walk gave,
    the notes `settled` in their packs (passed over), the notebook's packed notes (`members`) and the hash records
    of the notes it looks at (`known`)."""

    def __init__(self, run: SyncRun, requested: list[str], found: Collection[str], all_notes: AllNotesScope | None,
                 stats: Mapping[str, tuple[int, int]] | None, settled: set[str],
                 members: dict[str, tuple[str, str]]) -> None:
        self.run = run
        self.deps = run.deps
        self.requested = requested
        self.found = found
        self.all_notes = all_notes
        self.stats = stats
        self.settled = settled
        self.members = members
        self.known = run.deps.store.note_hashes(requested)

    async def packed(self, items: list[PreparedNote | NoteOutcome], done: PreparedSources
                     ) -> list[PreparedNote | NoteOutcome]:
        """The packed notes of the run into `done` (packs, and per requested note the pack it is live in); returns
        the notes that stay alone and the outcomes of the rest, for the single-note branches.

        A run over a few notes (`ask`, `refresh PATH…`), or a `refresh --all` whose other notes are settled in
        their packs, lays out only the packs whose ranges hold the notes it has to look at; the other packs stay
        as they are (and `refresh --all` reports them reused)."""
        run, deps, all_notes, members, settled = self.run, self.deps, self.all_notes, self.members, self.settled
        store, nb = deps.store, deps.notebook_id
        unpacking = all_notes is not None and deps.settings.pack == "never"
        fits: list[PreparedNote] = []
        alone: list[PreparedNote | NoteOutcome] = []
        for item in items:
            if isinstance(item, PreparedNote) and not unpacking and packable(deps, item, _size(item, self.known)):
                fits.append(item)
            else:
                alone.append(item)
        holding = {source_id for source_id, _ in members.values()}
        everything = store.packs(nb)
        records = [r for r in everything if r.source_id in holding]
        narrowed = (bool(settled) or all_notes is None) and not crowded(deps, run.remote)
        within: list[PackRecord] | None = None
        reach: set[str] | None = None
        if narrowed:
            fit_paths = {f.path for f in fits}
            # with `refresh --all`, also the packs of notes that are neither settled nor packable now: gone,
            # excluded, or too large for a pack
            troubled = [p for p in members if p not in settled and p not in fit_paths] if settled else []
            within = packs_in_reach(records, [*fit_paths, *troubled])
            reach = {r.source_id for r in within}
        held = {path for path, (source_id, _) in members.items() if reach is None or source_id in reach}
        in_run = {i.path for i in items}
        # a whole-vault run that looks at every note has every note of the vault among `items` already
        others = [] if _whole_vault(all_notes) and not narrowed else sorted(held - in_run)
        other_known = store.note_hashes(others)
        for item in load_notes(deps, others, others, other_known, run.read, self.stats):
            if isinstance(item, PreparedNote) and not unpacking and packable(deps, item, _size(item, other_known)):
                fits.append(item)
        layout = packed_notes(deps, fits, {**other_known, **self.known})
        wanted, shown = self._scope()
        scope = PackScope(
            layout, members, shown, wanted, within, gone=held - {n.path for n in layout},
            # a whole-vault run retires the packs that hold no note of the vault (an older upload adopted)
            empty=[r for r in everything if r.source_id not in holding] if _whole_vault(all_notes) else [],
            alone_parts=sum(len(i.parts) for i in alone
                            if isinstance(i, PreparedNote) and not _live(i.path, run.registry, run.remote)),
            leaving=set(vanished_paths(items, all_notes, run.registry, settled)) if all_notes is not None else set(),
            found={*self.found, *others}, report_notes=() if all_notes is not None else self.requested)
        if within is not None and not within and not layout and not scope.empty:  # nothing in reach to lay out
            packs = PackRun()
        else:
            packs = await ensure_packs(run, scope)
        done.packs.extend(packs.packs)
        if settled and reach is not None:  # the packs out of reach of every change: reused as they are
            notes_of: dict[str, list[str]] = {}
            for path, (source_id, _) in members.items():
                if source_id not in reach:
                    notes_of.setdefault(source_id, []).append(path)
            done.packs.extend(held_pack_outcome(r, sorted(notes_of.get(r.source_id, ()))) for r in records
                              if r.source_id not in reach and r.source_id in run.remote)
            done.packs.sort(key=lambda o: o.paths[0] if o.paths else o.title)
        done.notes.extend(packs.notes)
        return alone

    def _scope(self) -> tuple[Callable[[Group], bool] | None, Callable[[PlannedPack], bool]]:
        """Which groups a run carries out and which kept packs it reports: every one for `refresh --all`, those
        touching its folders for `refresh --all PATH`, those holding a requested note otherwise."""
        all_notes, requested = self.all_notes, set(self.requested)
        if _whole_vault(all_notes):
            return None, lambda pack: True
        if all_notes is not None:
            scope: AllNotesScope = all_notes
            store, nb = self.deps.store, self.deps.notebook_id

            def covers_group(group: Group) -> bool:
                paths = group.paths() | {p for r in group.old_packs for p, _ in store.notes_of_pack(nb, r.source_id)}
                return any(scope.covers(p) for p in paths)

            return covers_group, lambda pack: any(scope.covers(p) for p in pack.paths)

        def holds_requested(group: Group) -> bool:
            return any(p in requested for pack in group.packs for p in pack.paths)

        def shows(pack: PlannedPack) -> bool:
            return any(p in requested for p in pack.paths)

        return holds_requested, shows

    async def singles(self, singles: list[PreparedNote | NoteOutcome],
                      items: list[PreparedNote | NoteOutcome]) -> list[NoteOutcome]:
        """The branches for the notes kept one per source (`singles`; `items` are the notes the run looked at)."""
        run, deps, all_notes = self.run, self.deps, self.all_notes
        remote, registry = run.remote, run.registry
        decided = decide_all(deps, singles, remote, registry)
        reread = read_for_upload(deps, decided, self.found, run.read)
        if reread is not None:
            decided = decide_all(deps, reread, remote, registry)
        works = [i for i in decided if isinstance(i, PlannedNote)]
        check_capacity_up_front(deps, works, remote, registry)
        singled = {i.path for i in singles}
        packed = [*(i.path for i in items if i.path not in singled), *self.settled]
        vanished = {} if all_notes is None else vanished_paths(decided, all_notes, registry, packed)
        removed = await remove_vanished(deps, remote, vanished, dry_run=run.dry_run)
        if run.dry_run:
            return removed + simulate(deps, decided, remote, run.protect)
        left = [*vanished, *(w.decision.rename_from for w in works if w.decision.rename_from is not None)]
        try:
            return removed + await Runner(deps, remote, run.protect, run.read, left).run(decided)
        except NlmsyncError as exc:
            stop_report(exc, deps.notebook_id, removed + notes_done(exc))
            raise


def _live(path: str, registry: RegistryView, remote: RemoteView) -> bool:
    rows = registry.mappings(path)
    return bool(rows) and all(resolved in remote for _, resolved in rows)


def _whole_vault(all_notes: AllNotesScope | None) -> bool:
    return all_notes is not None and "" in all_notes.roots


def _size(note: PreparedNote, known: dict[str, NoteHashes]) -> int:
    text = note.parts[0].text
    return len(text.encode("utf-8", "surrogateescape")) if text is not None else known[note.path].size
