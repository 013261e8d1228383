"""What a run's report says in words: the line of a run an error stopped (`report.stopped_line`), what the error
said, then what became of the notes asked for, counted as the report counts them; and what levelling did
(`Levelled.notice`)."""

from __future__ import annotations

from nlmsync.sync.branches import Branch
from nlmsync.sync.report import Levelled, NoteOutcome, stopped_line


def test_a_stopped_runs_line_counts_the_notes_done_excluded_failed_and_not_tried() -> None:
    outcomes = [NoteOutcome(path="a.md", branch=Branch.ADDED), NoteOutcome(path="b.md", branch=Branch.REUSED),
                NoteOutcome(path="c.md", branch=Branch.EXCLUDED, reason="empty"),
                NoteOutcome(path="d.md", branch=Branch.FAILED, error="refused"),
                NoteOutcome(path="e.md", branch=Branch.FAILED, not_tried=True)]
    line = stopped_line("the notebook is full", ["a.md", "b.md", "c.md", "d.md", "e.md"], outcomes)
    assert line == "the notebook is full; 2 of 5 notes done, 1 excluded, 1 failed, 1 not tried"
    assert stopped_line("the login expired", ["a.md"], outcomes[:1]).endswith(
        "; 1 of 1 notes done, 0 failed, 0 not tried")  # no excluded note: none said


def test_levelling_says_the_copies_it_deletes_in_the_singular_and_the_plural() -> None:
    assert Levelled(retired=["s1"]).notice() == "1 copy of what the notebook holds elsewhere is deleted"
    assert Levelled(retired=["s1", "s2"]).notice() == "2 copies of what the notebook holds elsewhere are deleted"
    assert Levelled().notice() is None
