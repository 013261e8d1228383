"""The line `refresh` prints for each note: its branch in its colour, the path, and what else happened to it."""

from __future__ import annotations

from nlmsync.cli.sync_cmds import _branch_style, _note_line
from nlmsync.sync import Branch, NoteOutcome


def test_a_notes_line_says_it_was_split_and_adopted_in_its_branchs_colour() -> None:
    note = NoteOutcome(path="big.md", branch=Branch.ADDED, part_count=3, adopted=True, source_ids=["s1", "s2", "s3"])
    assert _note_line(note) == ("[green]added    [/green] big.md (split into 3 parts) (adopted existing source) "
                                "→ s1, s2, s3")


def test_every_branch_has_a_colour() -> None:
    assert set(_branch_style()) == set(Branch)
