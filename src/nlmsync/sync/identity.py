"""Whether a remote source is nlmsync's own upload: by the registry, or else by the text the server holds.

A deterministic title (`inbox.md · ede09736`) is only a claim: anyone can add a source with that title by
hand. Taking a source by its title — adopting it instead of uploading, or deleting it as a duplicate — is
there to recover nlmsync's own uploads whose answer was lost, so an unregistered source is taken only when
`source_get_content` shows it holds the very text nlmsync uploads under that title. Any other source with
such a title is a look-alike: never adopted, deleted or evicted, and reported as unmanaged.

The real server hands back the indexed text re-joined by blank lines, not the bytes that were sent, so
texts are compared word for word. A source whose content cannot be read (not indexed yet, an error) is not
established; it is left alone, and a later run looks again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from nlmsync import vault as vault_files
from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionProblem,
    InputError,
    NotebookLMError,
    ServerCommandNotFoundError,
)
from nlmsync.sync.plan import prepare_note
from nlmsync.sync.titles import content_hash, parse_title

if TYPE_CHECKING:
    from nlmsync.sync.deps import SyncClient
    from nlmsync.sync.reconcile import RemoteView

# Errors that say nothing about one source but about the server as a whole: they stop the run.
_SERVER_UNUSABLE = (AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError)


def same_text(held: str, uploaded: str) -> bool:
    """Whether the content a server returned is the text that was uploaded (the same words in order)."""
    return held == uploaded or held.split() == uploaded.split()


async def holds_text(client: SyncClient, source_id: str, text: str | None, text_hash: str = "") -> bool:
    """Whether the remote source `source_id` holds `text` — or, when the text is not at hand any more, the
    exact text whose content hash is (or, for the short hash of a title, starts with) `text_hash`. False when
    the server cannot say.

    Raises:
        AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError: the server cannot be used.
    """
    try:
        held = (await client.source_get_content(source_id)).content
    except _SERVER_UNUSABLE:
        raise
    except NotebookLMError:
        return False
    return same_text(held, text) if text is not None else content_hash(held).startswith(text_hash or "-")


async def is_own_upload(client: SyncClient, vault_root: Path, source_id: str, title: str) -> bool:
    """Whether an unregistered source with an nlmsync title holds what nlmsync uploads under that title (the
    note's part as it is now, or a text whose hash the title carries); a look-alike is unmanaged."""
    parsed = parse_title(title)
    if parsed is None:
        return False
    path, short = parsed
    text = None
    try:
        note = prepare_note(path, vault_files.read_note_text(vault_root, path))
    except (InputError, OSError, ValueError):  # gone, unreadable, or not a path of this vault at all
        note = None
    if note is not None:
        text = next((p.text for p in note.parts if p.title == title), None)
    return await holds_text(client, source_id, text, short)


async def screen_title_matches(client: SyncClient, registered: Callable[[str], bool], remote: RemoteView,
                               uploads: Mapping[str, str]) -> None:
    """Mark as look-alikes (`remote.foreign`) the unregistered sources (`registered(source_id)` false) titled
    like one of `uploads` (title -> the text nlmsync uploads under it) that do not hold that text. Costs one
    `source_get_content` per unregistered title match, and nothing when there is none (the usual case)."""
    for source_id, title in list(remote.sources.items()):
        text = uploads.get(title)
        if text is None or source_id in remote.foreign:
            continue
        if registered(source_id):
            continue  # the registry says whose it is
        if not await holds_text(client, source_id, text):
            remote.foreign[source_id] = title


def lookalike_notice(source_id: str, title: str) -> str:
    """The report line for a look-alike left alone."""
    return (f"source {source_id} is titled like an nlmsync upload ({title}) but does not hold that text; "
            "left alone as unmanaged")
