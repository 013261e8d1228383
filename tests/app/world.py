"""An in-process world for the orchestrator's tests: a small vault, the fake server, a real state store."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from nlmsync.app import Orchestrator
from nlmsync.config import Settings
from nlmsync.errors import NlmsyncError
from nlmsync.fake.faults import Faults
from nlmsync.fake.server import build_fake_server
from nlmsync.fake.state import FakeNotebookLM
from nlmsync.notebooklm.client import NotebookLMClient, connect
from nlmsync.store import StateStore
from nlmsync.sync import NoteOutcome, RefreshReport

MUTATING_TOOLS = frozenset({"source_add", "source_delete", "notebook_create", "notebook_query", "source_rename",
                            "notebook_delete"})


async def _no_sleep(_: float) -> None:
    return None


def stopped_report(error: NlmsyncError) -> RefreshReport:
    """The report of what a refresh had done when `error` stopped it (`NlmsyncError.report`, which a refresh
    fills with a `RefreshReport`)."""
    return cast("RefreshReport", error.report)


def notes_done(error: NlmsyncError) -> list[NoteOutcome]:
    """The note outcomes `error` carries of the run it stopped (none when it carries no report)."""
    return list(error.report.notes) if isinstance(error.report, RefreshReport) else []


@dataclass
class World:
    """A vault folder, a fake NotebookLM holding one notebook, and a state file; `run()` opens an Orchestrator."""

    root: Path
    fake: FakeNotebookLM
    notebook_id: str
    settings: Settings
    stores: list[StateStore] = field(default_factory=list)

    @property
    def vault(self) -> Path:
        return self.root / "vault"

    def write(self, rel: str, text: str) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def store(self) -> StateStore:
        store = StateStore.open(self.settings.state_path, self.settings)
        self.stores.append(store)
        return store

    @asynccontextmanager
    async def run(self, wrap: Callable[[object], object] | None = None, sleep: Callable[[float], Awaitable[None]] = _no_sleep,
                  **overrides: object) -> AsyncIterator[Orchestrator]:
        async with self.run_with(self.settings.model_copy(update=overrides), wrap, sleep) as orch:
            yield orch

    @asynccontextmanager
    async def run_with(self, settings: Settings, wrap: Callable[[object], object] | None = None,
                       sleep: Callable[[float], Awaitable[None]] = _no_sleep) -> AsyncIterator[Orchestrator]:
        """An Orchestrator on `settings` (any vault and state file) against this world's fake."""
        store = StateStore.open(settings.state_path, settings)
        try:
            async with connect(build_fake_server(self.fake), settings, sleep=sleep) as client:
                yield Orchestrator(settings, store, cast(NotebookLMClient, wrap(client)) if wrap else client)
        finally:
            store.close()

    def device(self, name: str) -> Device:
        """A machine of its own (`Device`): an empty vault folder `root/name`, sharing this world's notebook."""
        (self.root / name).mkdir(exist_ok=True)
        return Device(self, self.root / name)

    def remote(self) -> dict[str, str]:
        """Source id -> title of the notebook, straight from the fake."""
        return {s.id: s.title for s in self.fake.notebooks[self.notebook_id].sources.values()}

    def remote_texts(self) -> dict[str, str]:
        return {s.title: s.text for s in self.fake.notebooks[self.notebook_id].sources.values()}

    def mutating_calls(self, since: int = 0) -> list[str]:
        return [c.tool for c in self.fake.calls[since:] if c.tool in MUTATING_TOOLS]

    def calls(self, tool: str, since: int = 0) -> int:
        return sum(1 for c in self.fake.calls[since:] if c.tool == tool)


    def close(self) -> None:
        """Close the stores `store()` handed out."""
        while self.stores:
            self.stores.pop().close()


@dataclass
class Device:
    """Another machine working on the same notebook: its own vault folder, with the state file in it (where a
    file-sync tool copies it along), and no setting but what a test gives each run."""

    world: World
    vault: Path

    @property
    def state(self) -> Path:
        return self.vault / ".nlmsync" / "state.db"

    def write(self, rel: str, text: str) -> None:
        path = self.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def settings(self, **values: object) -> Settings:
        return Settings(vault=self.vault, **values)

    @asynccontextmanager
    async def run(self, **values: object) -> AsyncIterator[Orchestrator]:
        async with self.world.run_with(self.settings(**values)) as orch:
            yield orch

    def sync_from(self, other: Device, *, state: bool = True) -> None:
        """Make this vault folder a copy of `other`'s, as a file-sync tool does: notes deleted there go here too.
        The state folder comes along when `state` is true; otherwise this device keeps its own (none, on a new
        machine)."""
        own = self.vault.with_name(self.vault.name + ".state")
        if not state and (self.vault / ".nlmsync").exists():
            shutil.move(self.vault / ".nlmsync", own)
        shutil.rmtree(self.vault, ignore_errors=True)
        shutil.copytree(other.vault, self.vault, ignore=None if state else shutil.ignore_patterns(".nlmsync"))
        if own.exists():
            shutil.move(own, self.vault / ".nlmsync")

    def lose_state(self) -> None:
        """The state folder deleted (or a clone that never had it)."""
        shutil.rmtree(self.vault / ".nlmsync", ignore_errors=True)


def new_world(root: Path, capacity: int = 50, faults: Faults | None = None, **settings: object) -> World:
    """A world under `root`: `root/vault`, `root/state.db`, a fake holding one empty notebook."""
    fake = FakeNotebookLM(capacity=capacity, faults=faults or Faults())
    notebook_id = fake.apply("notebook_create", {"title": "Test"})["notebook_id"]
    fake.calls.clear()
    vault = root / "vault"
    vault.mkdir(exist_ok=True)
    values = {"vault": vault, "state": root / "state.db", "notebook": notebook_id, "capacity": capacity, **settings}
    return World(root, fake, notebook_id, Settings(**values))
