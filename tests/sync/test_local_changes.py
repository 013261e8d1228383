"""`local_changes`: which synced notes the vault no longer matches, each named by its path."""

from __future__ import annotations

from pathlib import Path

from nlmsync.sync.local_changes import LocalChange, local_changes
from nlmsync.sync.prepared import split_note
from nlmsync.sync.titles import content_hash
from nlmsync.vault import NoteChange


def test_a_synced_note_now_excluded_or_edited_is_named_by_its_path(tmp_path: Path) -> None:
    for name in ("kept.md", "private.md", "edited.md"):
        (tmp_path / name).write_text(f"# {name}\n\nthe text\n", encoding="utf-8")
    synced = {name: tuple(content_hash(part) for part in split_note(f"# {name}\n\nthe text\n"))
              for name in ("kept.md", "private.md", "edited.md")}
    (tmp_path / "edited.md").write_text("# edited.md\n\nanother text\n", encoding="utf-8")
    changes = local_changes(tmp_path, synced, exclude=["private.md"])
    assert changes == [LocalChange("edited.md", NoteChange.MODIFIED), LocalChange("private.md", NoteChange.EXCLUDED)]
