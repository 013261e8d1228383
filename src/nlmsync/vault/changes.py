"""How a vault note changed, in one vocabulary: the watch's file events (added, modified, deleted) and the
local changes `status` reports for synced notes (modified, renamed, deleted, excluded; added: a note in no source
of a packed notebook) use the same words."""

from __future__ import annotations

from enum import StrEnum


class NoteChange(StrEnum):
    ADDED = "added"
    MODIFIED = "modified"
    RENAMED = "renamed"
    DELETED = "deleted"
    EXCLUDED = "excluded"
