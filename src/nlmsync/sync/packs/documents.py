"""Packed notebooks and the vault's documents: which documents' text goes into packs (`documents_in_packs`).

The rule, decided by a `refresh --all` of the whole vault: the attachments stay file sources (NotebookLM keeps its
own rendering of their figures and scanned pages) while the notebook has room for every one of them beside the
fewest packs the notes can be in, within its capacity less `pack_free`. When it has not, every document with a
text layer goes into packs — its text by pages, under a heading naming the file — and only the attachments with no
text (scanned PDFs, images, audio, video) stay file sources. Any other run leaves each document where it is, and
puts a new one where that rule put the others: into packs when the packs hold documents, else a file source."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import NamedTuple

from nlmsync.store import NoteHashes
from nlmsync.sync.packs.layout import fewest_packs
from nlmsync.sync.packs.plan import Members, pack_limit, packable, room_for_packs
from nlmsync.sync.packs.text import block_size
from nlmsync.sync.prepared import PreparedNote, is_document
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.run import Request, SyncRun


class Documents(NamedTuple):
    """Where a run's documents go: the paths whose text goes into packs, and whether the packs leave room for every
    attachment as a file source."""

    packed: set[str]
    files_fit: bool


def documents_in_packs(run: SyncRun, request: Request, members: Members, settled: Collection[str],
                       notes: Sequence[PreparedNote | NoteOutcome], known: Mapping[str, NoteHashes],
                       files: Sequence[tuple[str, bool]]) -> Documents:
    """The documents of `files` (path, whether it has a text layer: the run's attachments that can be sources)
    whose text the run puts into packs (see the module). `notes`: the run's notes read or known by their stat
    (`known`), `settled`: those it passes over in their packs (`members`)."""
    deps = run.deps
    if deps.settings.pack == "never":
        return Documents(set(), False)
    if not request.whole_vault or request.stats is None:  # the rule the last whole-vault run decided holds
        packing = any(is_document(path) for path in members)
        return Documents({path for path, has_text in files if is_document(path)
                          and (path in members or (packing and has_text and not _live(run, path)))}, False)
    sizes: list[tuple[str, int]] = [(path, request.stats[path][1]) for path in settled if path in request.stats]
    alone_parts = 0
    for note in notes:
        if not isinstance(note, PreparedNote):
            continue
        text = note.parts[0].text
        size = len(text.encode("utf-8", "surrogateescape")) if text is not None else known[note.path].size
        if packable(deps, note, size):
            sizes.append((note.path, size))
        else:
            alone_parts += len(note.parts)
    leaving = [*(path for path, _ in sizes), *(n.path for n in notes), *(path for path, _ in files)]
    room = room_for_packs(deps, run.remote, run.registry, leaving, alone_parts)
    needed = fewest_packs([block_size(path, size) for path, size in sorted(sizes)], pack_limit(deps))
    if needed + len(files) <= room.budget:
        return Documents(set(), True)
    return Documents({path for path, has_text in files if has_text and is_document(path)}, False)


def files_to_add(run: SyncRun, paths: Sequence[str]) -> int:
    """How many of the attachments at `paths` have no live source yet: the room their uploads take."""
    return sum(1 for path in paths if not _live(run, path))


def _live(run: SyncRun, path: str) -> bool:
    """Whether the attachment at `path` has live sources of its own (a file source, or its text's parts)."""
    rows = run.registry.mappings(path)
    return bool(rows) and all(resolved in run.remote for _, resolved in rows)
