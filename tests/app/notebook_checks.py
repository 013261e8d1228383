"""What must hold of a notebook mirrored from a vault, read from the fake's own sources (what NotebookLM holds):
every note of the vault in exactly one source with its current text, and no other source nlmsync titled."""

from __future__ import annotations

import itertools
import os
import time
from collections.abc import Set as AbstractSet
from pathlib import Path

from nlmsync.fake.replies import indexed_text
from nlmsync.sync.packs.text import path_heading
from nlmsync.sync.prepared import RACY_MTIME_NS
from nlmsync.sync.titles import parse_note_title, parse_pack_title

LONG_AGO = time.time_ns() - 30 * 86_400 * 10**9
"""Where `write_note`'s clock starts: a second a note, it stays in the past for millions of notes written by one
process (a test session in one process writes thousands)."""
_written = itertools.count()


def note_text(i: int, version: int = 1) -> str:
    return (f"# Note {i}\n\nVersion {version}: the body of note {i} about topic{i % 7}.\n\n"
            f"## Details\nMore words about item {i}, sorted {i * 3}.\n")


def write_note(vault: Path, rel: str, text: str) -> None:
    """Write a note with a modification time of its own, safely in the past (a note read just after being
    written is read again by the next run, which is right but not what these tests count)."""
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    written = LONG_AGO + next(_written) * 10**9
    assert written < time.time_ns() - RACY_MTIME_NS, "write_note's clock has run into the present"
    os.utime(path, ns=(written, written))


def fill(vault: Path, count: int, folders: int = 4, pad: int = 0) -> list[str]:
    paths = [f"f{i % folders}/n{i:03}.md" for i in range(count)]
    for i, path in enumerate(paths):
        write_note(vault, path, note_text(i) + f"Padding words for note {i}. " * pad)
    return sorted(paths)


def vault_notes(vault: Path) -> dict[str, str]:
    return {p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8") for p in sorted(vault.rglob("*.md"))
            if ".nlmsync" not in p.parts}


def held_notes(sources: dict[str, tuple[str, str]], paths: set[str]) -> dict[str, list[str]]:
    """Path -> the words each source holds of that note (a pack's text cut at its notes' path headings; a note's
    own source whole), from `sources` (id -> (title, text)) as NotebookLM holds them."""
    held: dict[str, list[str]] = {}
    for title, text in sources.values():
        if parse_pack_title(title) is not None:
            current: str | None = None
            lines: list[str] = []
            for line in text.splitlines():
                heading = line[2:] if line.startswith("# ") else None
                if heading in paths and line == path_heading(heading):
                    if current is not None:
                        held.setdefault(current, []).append(" ".join(" ".join(lines).split()))
                    current, lines = heading, []
                else:
                    lines.append(line)
            if current is not None:
                held.setdefault(current, []).append(" ".join(" ".join(lines).split()))
        elif (parsed := parse_note_title(title)) is not None:
            held.setdefault(parsed[0], []).append(" ".join(text.split()))
    return held


def assert_mirrored(world, vault: Path, hand_added: AbstractSet[str] = frozenset()) -> None:
    """Every note of `vault` in exactly one source holding its current words; no duplicate, no orphan: every
    source is a pack or a note's upload, or one of `hand_added`."""
    notes = vault_notes(vault)
    sources = {s.id: (s.title, indexed_text(s.text))
               for s in world.fake.notebooks[world.notebook_id].sources.values() if s.id not in hand_added}
    titles = [t for t, _ in sources.values()]
    assert len(titles) == len(set(titles)), "two sources with one title"
    assert all(parse_pack_title(t) or parse_note_title(t) for t in titles), titles
    held = held_notes(sources, set(notes))
    assert sorted(held) == sorted(notes), (sorted(set(held) ^ set(notes)))
    for path, words in held.items():
        assert words == [" ".join(notes[path].split())], f"{path}: held {len(words)} times or at another version"


def watch_for_notes_out(world, vault: Path) -> list[list[str]]:
    """Watch the fake from now on: after each delete it applies that leaves notes of `vault` in no source (at any
    version), those notes are added to the list returned, which stays empty while no delete leaves a note out."""
    out: list[list[str]] = []
    paths = set(vault_notes(vault))
    apply = world.fake.apply

    def watched(tool, arguments, plan=None):
        result = apply(tool, arguments, plan)
        if tool == "source_delete":
            sources = {s.id: (s.title, indexed_text(s.text))
                       for s in world.fake.notebooks[world.notebook_id].sources.values()}
            if left := sorted(paths - set(held_notes(sources, paths))):
                out.append(left)
        return result

    world.fake.apply = watched
    return out
