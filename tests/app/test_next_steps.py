"""What `status` tells the user to do next (`next_steps`), from what it found."""

from __future__ import annotations

from nlmsync.app.messages import next_steps
from nlmsync.app.results import LocalChangeEntry, PackEntry, StatusReport


def test_a_notebook_over_its_capacity_says_where_to_set_the_plans_limit() -> None:
    report = StatusReport(server="fake", notebook_id="nb", title="Notes", capacity=50, source_count=51)
    steps = next_steps(report, [])
    assert [(s.why, s.command) for s in steps] == [(
        "the notebook holds 51 sources, capacity is 50",
        "set 'capacity' to your plan's limit (50 free, 100 Plus, 300 Pro, 600 Ultra) in .nlmsync/config.toml or "
        "NLMSYNC_CAPACITY")]
    assert next_steps(report.model_copy(update={"source_count": 50}), []) == []  # at capacity: nothing to do


def _change(path: str, change: str, command: str) -> LocalChangeEntry:
    return LocalChangeEntry(path=path, change=change, command=command)


def _pack(first: str, notes: int) -> PackEntry:
    return PackEntry(title=f"Pack {first}", source_id=f"s-{first}", first_path=first, last_path=first,
                     note_count=notes, byte_count=100, live=False)


def test_changed_new_and_lost_notes_each_get_one_step_counted_in_words() -> None:
    report = StatusReport(server="fake", notebook_id="nb", title="Notes", capacity=50, source_count=3,
                          local_changes=[_change("a.md", "modified", "nlmsync refresh a.md"),
                                         _change("b.md", "renamed", "nlmsync refresh b.md c.md"),
                                         _change("a.md", "modified", "nlmsync refresh a.md"),
                                         _change("new.md", "added", "nlmsync refresh new.md")],
                          packs=[_pack("x.md", 3), _pack("y.md", 1)])
    assert [(s.why, s.command) for s in next_steps(report, [])] == [
        ("3 synced notes changed in the vault", "nlmsync refresh a.md b.md c.md"),  # each target once
        ("1 note of the vault is in no source of the packed notebook", "nlmsync refresh --all (puts each in its pack)"),
        ("2 packs holding 4 notes are missing from the notebook", "nlmsync refresh (uploads them again)")]
    one = report.model_copy(update={"local_changes": [_change("a.md", "modified", "nlmsync refresh a.md"),
                                                      *[_change(f"n{i}.md", "added", "") for i in range(2)]],
                                    "packs": [_pack("x.md", 1)]})
    assert [s.why for s in next_steps(one, [])] == [
        "1 synced note changed in the vault", "2 notes of the vault are in no source of the packed notebook",
        "1 pack holding 1 note is missing from the notebook"]

