"""The seam between a kind of unit and the executor that carries units out: what a unit uploads and records
(`Unit`, `Upload`, `Uploaded`, `Turn`). A unit never calls the executor: it is asked, and handed the result."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from nlmsync.sync.report import NoteOutcome


@dataclass(frozen=True)
class Upload:
    """One source a unit adds: its text under its title. `claim` picks, of the listed sources titled so, the one
    that is this upload already (adopted instead of adding: one an interrupted run or a lost answer left), None
    when none is."""

    text: str
    title: str
    claim: Callable[[Sequence[str]], str | None]


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

    def start(self) -> Sequence[Upload] | None:
        """It starts: the sources it adds ([] for none); None when it has nothing to carry out (it said its outcome
        itself)."""
        ...

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        """It was not carried out — no room could be made, or (`not_tried`) the run stopped before it: `message`
        says why."""
        ...

    async def finish(self, uploaded: Uploaded, turn: Turn) -> Sequence[str]:
        """Record what it did (or that its uploads failed), in one step and in its `turn` if it keeps one; returns
        the ids of the sources it replaced, which the executor deletes."""
        ...
