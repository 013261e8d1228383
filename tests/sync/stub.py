"""A small stand-in for the NotebookLM client in sync's own tests: the six calls of `sync.remote.SyncClient` over
a notebook held in a dict (as httpx's tests put a `MockTransport` behind the real client), with switches for the
faults sync must take: an add refused, an answer lost after the add landed. `Bench` is what a test of sync's
seams works with: a vault folder, a real state file and this client, put together as a run's `SyncRun`."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nlmsync.config import Settings
from nlmsync.errors import ConnectionLostError, NotebookLMError, NotFoundError
from nlmsync.store import StateStore
from nlmsync.sync.remote import RemoteView
from nlmsync.sync.run import SyncDeps, SyncRun


@dataclass
class Source:
    id: str
    title: str
    text: str = ""


@dataclass
class Notebook:
    title: str
    source_count: int


@dataclass
class Listing:
    notebook: Notebook
    sources: list[Source]


@dataclass
class Added:
    source_id: str


@dataclass
class Held:
    content: str


@dataclass
class StubClient:
    """The notebook's sources by id, in listing order; `calls` records each call's name."""

    notebook_id: str = "nb"
    sources: dict[str, Source] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    refuse_add: Callable[[str], NotebookLMError | None] = lambda title: None
    """The error an add of `title` is refused with (None: it lands)."""
    lose_answer_of_add: int | None = None
    """The add (counted from 1) whose answer is lost although it landed."""
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    def put(self, title: str, text: str = "") -> str:
        """A source already in the notebook (uploaded by anyone); returns its id."""
        source_id = f"s{next(self._ids)}"
        self.sources[source_id] = Source(source_id, title, text)
        return source_id

    def titles(self) -> list[str]:
        return [s.title for s in self.sources.values()]

    async def notebook_get(self, notebook_id: str) -> Listing:
        self.calls.append("notebook_get")
        return Listing(Notebook("Stub", len(self.sources)), list(self.sources.values()))

    async def source_add_text(self, notebook_id: str, text: str, title: str, wait: bool | None = None) -> Added:
        self.calls.append("source_add")
        refusal = self.refuse_add(title)
        if refusal is not None:
            raise refusal
        source_id = self.put(title, text)
        if self.lose_answer_of_add == self.calls.count("source_add"):
            raise ConnectionLostError("the answer was lost")
        return Added(source_id)

    async def source_add_file(self, notebook_id: str, file_path: str, title: str) -> Added:
        """A file source, named after its file as a server whose rename did not take leaves it."""
        self.calls.append("source_add")
        return Added(self.put(Path(file_path).name, Path(file_path).read_bytes().decode("latin-1")))

    async def source_delete(self, source_id: str) -> object:
        self.calls.append("source_delete")
        if self.sources.pop(source_id, None) is None:
            raise NotFoundError(f"no source {source_id}")
        return None

    async def source_rename(self, notebook_id: str, source_id: str, new_title: str) -> object:
        self.calls.append("source_rename")
        self.sources[source_id].title = new_title
        return None

    async def source_get_content(self, source_id: str) -> Held:
        self.calls.append("source_get_content")
        return Held("\n\n".join(self.sources[source_id].text.split("\n\n")))

    def mutating(self) -> list[str]:
        return [c for c in self.calls if c in ("source_add", "source_delete", "source_rename")]


@dataclass
class Bench:
    """A vault folder, a state file and a stub notebook: a run of sync made of the real parts but the server."""

    root: Path
    client: StubClient = field(default_factory=StubClient)
    stores: list[StateStore] = field(default_factory=list)

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    def write(self, rel: str, text: str) -> None:
        (self.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (self.vault / rel).write_text(text, encoding="utf-8")

    def settings(self, **values: object) -> Settings:
        return Settings(**{"vault": self.vault, "state": self.root / "state.db", "notebook": "nb", **values})

    def deps(self, **values: object) -> SyncDeps:
        settings = self.settings(**values)
        if not self.stores:
            self.stores.append(StateStore.open(settings.state_path, settings))
        return SyncDeps(self.client, self.stores[0], self.vault, settings, "nb")

    def remote(self) -> RemoteView:
        return RemoteView("nb", "Stub", {s.id: s.title for s in self.client.sources.values()})

    def run(self, dry_run: bool = False, **values: object) -> SyncRun:
        return SyncRun(self.deps(**values), self.remote(), dry_run)

    @property
    def store(self) -> StateStore:
        return self.stores[0]

    def close(self) -> None:
        for store in self.stores:
            store.close()
