"""What source preparation works with (`SyncDeps`): the server, the registry, the vault and the settings,
and the errors after which no call of a run can succeed (`FATAL_ERRORS`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlmsync.config import Settings
from nlmsync.errors import AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.split import MAX_SOURCE_BYTES, MAX_SOURCE_WORDS

ProgressCallback = Callable[[NoteOutcome], None]

# Errors that doom every remaining call of the run: stop instead of failing note after note.
FATAL_ERRORS = (AuthenticationRequiredError, ServerCommandNotFoundError, ServerUnreachableError)


@dataclass
class SyncDeps:
    """What source preparation works with: the server, the registry, the vault and the settings."""

    client: Any
    store: Any
    vault_root: Path
    settings: Settings
    notebook_id: str
    on_progress: ProgressCallback | None = None
    max_words: int = MAX_SOURCE_WORDS
    max_bytes: int = MAX_SOURCE_BYTES

    def progress(self, outcome: NoteOutcome) -> None:
        if self.on_progress is not None:
            self.on_progress(outcome)
