"""How a notebook command runs: an `Orchestrator` opened on the settings, with the terminal's progress display
(`RichProgress`, a `ProgressSink`) unless the output is JSON, quiet or not a terminal.

The orchestrator, anyio and rich are imported when a command runs, not with the module.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Self, TypeVar

from nlmsync.cli._output import escape_path, interactive

if TYPE_CHECKING:
    from rich.progress import TaskID

    from nlmsync.app import Orchestrator
    from nlmsync.config import Settings
    from nlmsync.store import StateStore
    from nlmsync.sync import NoteOutcome, PackOutcome

__all__ = ["RichProgress", "open_state", "run_app"]

T = TypeVar("T")


class RichProgress:
    """The terminal progress display (a `ProgressSink`): `label` until the first phase starts (connecting,
    reading the notebook), then one bar per phase with done/total, an ETA and the last note."""

    def __init__(self, label: str) -> None:
        from nlmsync.cli._progress import new_progress

        self._progress = new_progress()
        self._label = label
        self._task: TaskID = self._progress.add_task(f"{label}: connecting to the NotebookLM server…", total=None)
        self._phase = "connecting"
        self._current: tuple[str, int] | None = None
        self._after_reading: tuple[str, int] | None = None

    def __enter__(self) -> Self:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    def connected(self) -> None:
        """The server answered: the work itself (reading the notebook, comparing) is under way."""
        self._progress.update(self._task, description=f"{self._label}: reading the notebook…")

    def start(self, label: str, total: int) -> None:
        self._phase = label
        self._current = (label, total)
        self._progress.remove_task(self._task)
        self._task = self._progress.add_task(label, total=total)
        self._progress.refresh()

    def indexing(self, done: int, total: int) -> None:
        if self._phase != "indexing":
            self.start(f"{self._label}: indexing the vault", total)
            self._phase = "indexing"
        self._progress.update(self._task, completed=done)

    def reading(self, done: int, total: int) -> None:
        """The notes being read, as a bar of its own; once all are read, the phase they were read for again."""
        if not total:
            return
        if self._phase != "reading":
            self._after_reading = self._current
            self.start(f"{self._label}: reading the notes", total)
            self._phase = "reading"
        self._progress.update(self._task, completed=done, refresh=True)  # told every few dozen notes: drawn each time
        if done >= total and self._after_reading is not None:
            self.start(*self._after_reading)

    def advance(self, outcome: NoteOutcome | PackOutcome) -> None:
        from nlmsync.sync import Branch

        counts = outcome.branch not in (Branch.EVICTED, Branch.REMOVED)
        self._progress.update(self._task, advance=1 if counts else 0,
                              description=f"{outcome.branch.value} {escape_path(outcome.path)}")


def run_app(settings: Settings, work: Callable[[Orchestrator], Awaitable[T]], *, label: str, quiet: bool) -> T:
    """Open an orchestrator and run `work` in it; on a terminal, unless `quiet` (or --json), with a progress
    display on stderr that says what it waits for (`label`: the command).

    Raises:
        NoNotebookError: no notebook is given and the state file knows none — said before the state file is made
            (a command run outside the vault leaves nothing there), with the notebooks the server has.
    """
    import gc

    import anyio

    from nlmsync.app import Orchestrator

    if not _notebook_known(settings):
        anyio.run(_no_notebook, settings)

    # What the imports built (mcp's and pydantic's models: most of the heap) lives as long as the process:
    # out of the collector's full passes, which otherwise rescan it while a run allocates per note
    # (~0.3 s of CPU in an idle refresh of 2,000 notes). Unfrozen after the run: an in-process caller's
    # garbage is collected as before.
    gc.freeze()
    # The result leaves through `done`, not as the main task's result: on Python 3.11 the event loop's
    # shutdown formats the main task, result included, twice (a SIGINT handler check), which for the report
    # of a 2,000-note refresh cost 0.2 s.
    done: list[T] = []

    async def main() -> None:
        if quiet or not interactive():
            async with Orchestrator.open(settings) as orch:
                done.append(await work(orch))
                return
        with RichProgress(label) as progress:
            async with Orchestrator.open(settings, progress=progress) as orch:
                progress.connected()
                done.append(await work(orch))

    try:
        anyio.run(main)
    finally:
        gc.unfreeze()
    return done[0]


def _notebook_known(settings: Settings) -> bool:
    """Whether the run has a notebook: given, or the one the state file used last."""
    if (settings.notebook or "").strip():
        return True
    store = open_state(settings)
    if store is None:
        return False
    with store:
        return store.default_notebook() is not None


async def _no_notebook(settings: Settings) -> None:
    """Raise the error of a run with no notebook, the server asked which notebooks it has.

    Raises:
        NoNotebookError: always.
    """
    from nlmsync.app.notebooks import no_notebook
    from nlmsync.app.servers import connect_server

    async with connect_server(settings) as client:
        raise await no_notebook(client, settings.vault)


def open_state(settings: Settings) -> StateStore | None:
    """The state file, open; None when there is none yet (nothing was synced or asked with it).

    Raises:
        StateError: something that is not a state file is where it should be (a folder, a broken link …).
    """
    if not os.path.lexists(settings.state_path):
        return None
    from nlmsync.store import StateStore

    return StateStore.open(settings.state_path, settings)
