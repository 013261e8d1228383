"""The seam between a kind of unit and the executor that carries units out: what a unit uploads and records
(`Unit`, `Upload`, `Uploaded`, `Turn`). A unit never calls the executor: it is asked, and handed the result."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from nlmsync.errors import NlmsyncError
from nlmsync.sync.branches import Branch
from nlmsync.sync.report import NoteOutcome

if TYPE_CHECKING:
    from nlmsync.sync.remote import RemoteView
    from nlmsync.sync.run import SyncDeps


@dataclass(frozen=True)
class Upload:
    """One source a unit adds: its text (or, with `file`, the file at that path) under its title. `claim` picks, of
    the listed sources titled so (or under one of the titles it may also be `listed_as`), the one that is this
    upload already (adopted instead of adding: one an interrupted run or a lost answer left), None when none is."""

    text: str
    title: str
    claim: Callable[[Sequence[str]], str | None]
    file: str | None = None
    """The file uploaded as the source (a file source), instead of `text`."""
    listed_as: tuple[str, ...] = ()
    """Other titles the source may be listed under (a file source whose title did not take keeps its file name)."""
    slow: bool = False
    """The server may take minutes to process it (audio, video): the executor lets it wait beside the other uploads,
    not in their place, and its unit records as soon as it is done, not in its turn."""

    def titles(self) -> tuple[str, ...]:
        """Every title the source may be listed under, its own first."""
        return (self.title, *self.listed_as)


@dataclass(frozen=True)
class Added:
    """A source an upload became: added, or `adopted` (a listed source `Upload.claim` took)."""

    source_id: str
    adopted: bool = False


@dataclass(frozen=True)
class Uploaded:
    """What came of a unit's uploads: the sources, in the order of its uploads, or why they failed (`error`)."""

    added: tuple[Added, ...] = ()
    error: str | None = None
    not_tried: bool = False
    """The uploads were not sent: the run stopped before them (`error` says why)."""


class Turn(Protocol):
    """A unit's place in the order units record in: after the unit that started before it."""

    async def wait(self) -> None:
        """Wait until the unit started before this one has recorded what it did."""
        ...

    def passed(self) -> None:
        """This unit has recorded what it did: the next one may."""
        ...


class Unit(Protocol):
    """One unit of a run's work, as the executor sees it."""

    evictions: list[NoteOutcome]
    """Where the evictions made to fit this unit are reported."""

    def start(self) -> Sequence[Upload]:
        """It starts: the sources it adds ([] for none: it only records, as a rename does). A source reused as it is
        (nothing to write but its use) is never made one: its kind says its outcome before."""
        ...

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        """It was not carried out — no room could be made, or (`not_tried`) the run stopped before it: `message`
        says why."""
        ...

    async def finish(self, uploaded: Uploaded, turn: Turn) -> Sequence[str]:
        """Record what it did (or that its uploads failed), in one step and in its `turn` if it keeps one; returns
        the ids of the sources it replaced, which the executor deletes."""
        ...


def own_upload(deps: SyncDeps, remote: RemoteView, path: str, candidates: Iterable[str]) -> str | None:
    """The first of `candidates` (ids of sources titled as an upload of `path`) that is nlmsync's upload of it:
    registered to `path`, or to nothing (and not a look-alike)."""
    for source_id in candidates:
        if source_id in remote.foreign:
            continue
        row = deps.store.mapping_by_source_id(deps.notebook_id, source_id)
        if row is None or row.path == path:
            return source_id
    return None


async def record_in_turn(turn: Turn, outcome: NoteOutcome, commit: Callable[[], list[str]],
                         report: Callable[[NoteOutcome], None]) -> list[str]:
    """Record a unit's `outcome` in its `turn`: `commit` it to the state file (unless it failed), report it, pass
    the turn; returns what `commit` returned (the ids of the sources it replaced).

    Raises:
        NlmsyncError: the state file cannot take it (full, locked): reported as the unit's failure, and the run
            stops.
    """
    retire: list[str] = []
    await turn.wait()
    if outcome.branch != Branch.FAILED:
        try:
            retire = commit()
        except NlmsyncError as exc:
            report(NoteOutcome(path=outcome.path, branch=Branch.FAILED, part_count=outcome.part_count,
                               error=f"not recorded: {exc}"))
            raise
    report(outcome)
    turn.passed()
    return retire
