"""Which notes a `refresh` covers: the notes and folders it is given (vault-relative), the whole vault with
`--all`, the notes already synced when given nothing; and the part of the vault `--all PATH…` answers for."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nlmsync import vault as vault_files
from nlmsync.errors import InputError
from nlmsync.store import StateStore
from nlmsync.sync import AllNotesScope


@dataclass(frozen=True)
class RefreshNotes:
    """The notes a refresh covers: `paths` in order; which of them a walk of the vault `found` rather than the user
    naming them; for the whole vault, the note files the walk passed over (the report lists them with the reason)
    and the modification time and size the walk found the notes' files with (`stats`)."""

    paths: list[str]
    found: Collection[str]
    passed_over: list[vault_files.SkippedNote] = field(default_factory=list)
    stats: Mapping[str, tuple[int, int]] = field(default_factory=dict)


def named_notes(vault_root: Path, paths: Sequence[str], *, gone_ok: bool = False,
                attachments: frozenset[str] = frozenset()) -> tuple[list[tuple[str, bool]] | None, list[str]]:
    """The vault notes `paths` name (and attachments of the extensions `attachments`, found in the folders named),
    each with whether it was named itself (not found in a folder), or None when there are no paths; and the paths
    in normal form ("" for the vault itself). With `gone_ok`, a path inside the vault that is no longer there names
    no note.

    Raises:
        InputError: a path is neither a note nor a folder of the vault (nor, with `gone_ok`, inside it).
    """
    if not paths:
        return None, []
    notes = list(vault_notes(vault_root, attachments=attachments)[0])
    expanded: list[tuple[str, bool]] = []
    roots: list[str] = []
    for arg in paths:
        root, found, folder = _notes_of(vault_root, arg, notes, gone_ok=gone_ok)
        roots.append(root)
        expanded.extend((note, not folder) for note in found)
    return expanded, roots


def _notes_of(vault_root: Path, arg: str, notes: list[str], *, gone_ok: bool) -> tuple[str, list[str], bool]:
    """`arg` (a note or a folder, relative to the vault) in normal form ("" for the vault itself), the note
    paths it names among `notes`, and whether it named a folder."""
    rel = vault_files.normalize_rel_path(arg)
    if not rel:
        return "", notes, True
    full = vault_files.resolve_in_vault(vault_root, rel)
    if os.path.isdir(full):  # these say False for a name longer than the system takes, as for no file
        return rel, [n for n in notes if n.startswith(rel.rstrip("/") + "/")], True
    if os.path.isfile(full):
        return rel, [rel], False
    if gone_ok and not os.path.exists(full):
        return rel, [], True
    raise InputError(f"{arg}: no such note in the vault")


def vault_notes(vault_root: Path, exclude: Sequence[str] = (), attachments: frozenset[str] = frozenset()
                ) -> tuple[dict[str, tuple[int, int] | None], list[vault_files.SkippedNote]]:
    """Every note of the vault, sorted — an empty file too, which a refresh reads and reports as `empty` —, with
    the modification time (ns) and size the walk found its file with (None for an empty file, or one that has
    another name on disk), then the attachments of the extensions `attachments`, sorted; and the note files the
    walk passes over for another reason (a duplicate name, a link leading out …), those an `exclude` pattern
    matches as excluded by it, as the notes it matches are."""
    scan = vault_files.scan_vault(vault_root, attachments)
    empty = [skip.path for skip in scan.skipped if skip.reason == "empty"]
    passed_over = [vault_files.SkippedNote(skip.path, vault_files.EXCLUDED_BY_PATTERN)
                   if vault_files.matches_exclude(skip.path, exclude) else skip
                   for skip in scan.skipped if (skip.reason != "empty" and vault_files.has_note_suffix(skip.path))
                   or vault_files.is_attachment_path(skip.path, attachments)]
    walked = {n.path: (n.mtime_ns, n.size) if n.fs_path is None else None for n in scan.notes}  # in path order
    files = {a.path: (a.mtime_ns, a.size) if a.fs_path is None else None for a in scan.attachments}
    if not empty:
        return walked | files, passed_over
    return {path: walked.get(path) for path in sorted([*walked, *empty])} | files, passed_over


def synced_notes(store: StateStore, vault_root: Path, notebook_id: str) -> list[str]:
    """The notes whose sources the notebook holds (as the registry says: alone or in a pack) and that are still
    in the vault."""
    paths = dict.fromkeys(m.path for m in store.all_mappings(notebook_id) if m.status == "active")
    paths.update(dict.fromkeys(sorted(store.pack_members(notebook_id))))
    return [p for p in paths if (vault_root / p).is_file()]


def all_notes_scope(store: StateStore, notebook_id: str, paths: Sequence[str], roots: list[str],
                    selected: list[str]) -> AllNotesScope:
    """What `refresh --all [PATH…]` answers for: the whole vault, or only under the given paths (`roots`, the
    normal form of `paths`); `selected` are the notes the run refreshes.

    Raises:
        InputError: a path names neither a note of the vault nor a synced note.
    """
    if not roots:
        return AllNotesScope()
    scope = AllNotesScope(tuple(roots))
    registered = {m.path for m in store.all_mappings(notebook_id)} | set(store.pack_members(notebook_id))
    for arg, root in zip(paths, roots):
        one = AllNotesScope((root,))
        if not any(one.covers(p) for p in selected) and not any(one.covers(p) for p in registered):
            raise InputError(f"{arg}: no such note in the vault, and none synced under it")
    return scope
