"""The notebook as a run reads it: `RemoteView`, one `notebook_get` kept up to date by the run's own adds and
deletes (an empty listing of a notebook that should not be empty is read again), a delete made sure of
(`strict_delete`), and a source read back (`read_back`); all through the client a run is handed (`SyncClient`:
the six calls sync makes, so sync imports nothing of `notebooklm`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from nlmsync.errors import (
    AuthenticationRequiredError,
    ConnectionProblem,
    NotebookLMError,
    NotFoundError,
    ServerCommandNotFoundError,
)
from nlmsync.sync.titles import proves


class ListedSource(Protocol):
    """One source of a `notebook_get` answer."""

    @property
    def id(self) -> str: ...
    @property
    def title(self) -> str: ...


class ListedNotebook(Protocol):
    @property
    def title(self) -> str: ...
    @property
    def source_count(self) -> int: ...


class NotebookListing(Protocol):
    """A `notebook_get` answer: the notebook and its sources."""

    @property
    def notebook(self) -> ListedNotebook: ...
    @property
    def sources(self) -> Sequence[ListedSource]: ...


class AddedSourceId(Protocol):
    """A `source_add` answer: the new source's id."""

    @property
    def source_id(self) -> str: ...


class HeldText(Protocol):
    """A `source_get_content` answer: the text the server holds for a source."""

    @property
    def content(self) -> str: ...


class SyncClient(Protocol):
    """What sync needs of the NotebookLM client (`notebooklm.NotebookLMClient` is one). Every call raises
    `NotebookLMError` subclasses only (`ConnectionProblem` when the answer may have been lost)."""

    async def notebook_get(self, notebook_id: str) -> NotebookListing: ...
    async def source_add_text(self, notebook_id: str, text: str, title: str,
                              wait: bool | None = None) -> AddedSourceId: ...
    async def source_add_file(self, notebook_id: str, file_path: str, title: str) -> AddedSourceId: ...
    async def source_delete(self, source_id: str) -> object: ...
    async def source_rename(self, notebook_id: str, source_id: str, new_title: str) -> object: ...
    async def source_get_content(self, source_id: str) -> HeldText: ...


@dataclass
class RemoteView:
    """The notebook's sources (id -> title). `foreign` are sources titled like nlmsync's uploads that are not
    its own (read back and found to hold other text: `read_back`): never adopted by title, deleted or evicted."""

    notebook_id: str
    title: str = ""
    sources: dict[str, str] = field(default_factory=dict)
    reads: int = 0
    foreign: dict[str, str] = field(default_factory=dict)
    _by_title: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for source_id, title in self.sources.items():
            self._by_title.setdefault(title, []).append(source_id)

    def ids(self) -> set[str]:
        return set(self.sources)

    def __contains__(self, source_id: object) -> bool:
        return source_id in self.sources

    def __len__(self) -> int:
        return len(self.sources)

    def find_title(self, title: str) -> str | None:
        """The id of a source with exactly this title (the first one listed, look-alikes aside), if any."""
        return next((source_id for source_id in self._by_title.get(title, ()) if source_id not in self.foreign), None)

    def titled(self, title: str) -> list[str]:
        """The ids of every source with exactly this title, in listing order, look-alikes aside."""
        return [source_id for source_id in self._by_title.get(title, ()) if source_id not in self.foreign]

    def added(self, source_id: str, title: str) -> None:
        """A source added (or retitled: it keeps its place in the listing)."""
        previous = self.sources.get(source_id)
        if previous is not None:
            self._unindex(source_id, previous)
        self.sources[source_id] = title
        self._by_title.setdefault(title, []).append(source_id)

    def deleted(self, source_id: str) -> None:
        title = self.sources.pop(source_id, None)
        if title is not None:
            self._unindex(source_id, title)

    def _unindex(self, source_id: str, title: str) -> None:
        ids = self._by_title[title]
        ids.remove(source_id)
        if not ids:
            del self._by_title[title]


def _listing(details: NotebookListing) -> dict[str, str]:
    return {s.id: s.title for s in details.sources}


async def read_remote(client: SyncClient, notebook_id: str, *, expect_sources: bool,
                      first: NotebookListing | None = None) -> RemoteView:
    """Read the notebook's sources with one `notebook_get` (two when the first listing is suspicious).

    `first` is an answer already read in this run (it then counts as the first read). A listing is
    suspicious when it is empty although the registry (`expect_sources`) or the notebook's own
    `source_count` says there are sources.
    """
    details = first if first is not None else await client.notebook_get(notebook_id)
    reads = 1
    if not details.sources and (expect_sources or (details.notebook.source_count or 0) > 0):
        details = await client.notebook_get(notebook_id)
        reads += 1
    return RemoteView(notebook_id, details.notebook.title or "", _listing(details), reads)


async def lookup_after_lost_answer(client: SyncClient, notebook_id: str) -> dict[str, str]:
    """A fresh listing (id -> title), read after a mutating call whose answer was lost."""
    return _listing(await client.notebook_get(notebook_id))


# Errors that say nothing about one source but about the server as a whole: they stop the run.
_SERVER_UNUSABLE = (AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError)


async def strict_delete(client: SyncClient, notebook_id: str, remote: RemoteView, source_id: str) -> None:
    """Delete one source and be sure it is gone.

    When the answer is lost, a fresh listing decides: gone means done; still listed means the delete
    was not applied, so it is sent once more (deleting is safe to repeat once the listing proved it).

    Raises:
        NotebookLMError: the server refused the delete, or the second attempt failed too.
    """
    try:
        await client.source_delete(source_id)
    except NotFoundError:
        pass
    except ConnectionProblem:
        if source_id in await lookup_after_lost_answer(client, notebook_id):
            try:
                await client.source_delete(source_id)
            except NotFoundError:
                pass
    remote.deleted(source_id)


def same_text(held: str, uploaded: str) -> bool:
    """Whether the content a server returned is the text that was uploaded (the same words in order)."""
    return held == uploaded or held.split() == uploaded.split()




async def read_back(client: SyncClient, source_id: str, title: str, text: str | None = None) -> bool | None:
    """Whether the source holds nlmsync's text, read back from the server: its words hash to what its nlmsync
    `title` says, or it holds `text` (what nlmsync uploads under that title now, for a title of an earlier
    version of nlmsync). None when the server cannot say (not indexed yet, an error): the source is then left as
    it is, and a later run looks again.

    Raises:
        AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError: the server cannot be used.
    """
    try:
        held = (await client.source_get_content(source_id)).content
    except _SERVER_UNUSABLE:
        raise
    except NotebookLMError:
        return None
    return proves(title, held) or (text is not None and same_text(held, text))
