"""How many sources a notebook may hold, decided once by one pure function from what is known
(`decide_capacity`), and how a full notebook is said. The user's word wins over the plan; a refusal as full lowers
the figure until the capacity it was learned under changes, and a refusal beyond the plan's limit makes the plan the
figure (a plan downgraded: the notebook keeps its sources but takes no more)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING

from nlmsync.config import Settings
from nlmsync.errors import CapacityError, NotebookLMError, ServerCapacityError, ServerValidationError
from nlmsync.store import LearnedCapacity

if TYPE_CHECKING:
    from nlmsync.store import StateStore

FULL_HINT = ("set 'capacity' to your plan's limit (50 free, 100 Plus, 300 Pro, 600 Ultra) in "
             ".nlmsync/config.toml or NLMSYNC_CAPACITY")
CAPACITY_HINT = ("raise the 'capacity' setting if your plan allows more sources "
                 "(50 free, 100 Plus, 300 Pro, 600 Ultra), or remove sources in NotebookLM")
SMALLEST_PLAN_LIMIT = 50
_INVALID_ARGUMENT = re.compile(r"invalid[ _]argument|\(code 3\)", re.IGNORECASE)


class CapacitySource(StrEnum):
    """Where a capacity comes from (the strings are `--json`'s `capacity_source`)."""

    SETTING = "setting"
    """Given for this run: flag, environment or config file."""
    REMEMBERED = "remembered"
    """Given on an earlier run for this notebook."""
    LEARNED = "learned"
    """The server refused an add as full at this many sources."""
    PLAN = "plan"
    """What the notebook's plan allows."""
    HELD = "held"
    """The smallest plan's that allows what the notebook was read to hold."""
    DEFAULT = "default"
    """The `capacity` setting's default."""


@dataclass(frozen=True)
class KnownCapacity:
    """What is known of a notebook's capacity, whoever knows it: the settings, the state file, the plan, the
    listing."""

    setting: int | None = None
    """The capacity given for this run (`given_capacity`), None when none is."""
    remembered: int | None = None
    """The capacity given on an earlier run for the notebook (`StateStore.remembered_capacity`)."""
    learned: LearnedCapacity | None = None
    """What a server's refusal of an add as full taught (`StateStore.learned_capacity`)."""
    plan: int | None = None
    """The sources per notebook of the plan the server reports, None when it names none nlmsync knows (or was
    not asked)."""
    held: int = 0
    """The sources the notebook was read to hold."""
    plans: tuple[int, ...] = ()
    """The plans' limits, smallest first."""
    default: int = SMALLEST_PLAN_LIMIT
    """The `capacity` setting's default."""

    @classmethod
    def read(cls, store: StateStore, notebook_id: str, settings: Settings) -> KnownCapacity:
        """What the settings and the state file know of `notebook_id`'s capacity."""
        return cls(setting=given_capacity(settings), remembered=store.remembered_capacity(notebook_id),
                   learned=store.learned_capacity(notebook_id), default=settings.capacity)

    @property
    def plan_decides(self) -> bool:
        """Whether the plan can decide the capacity: none is given, now or before (the user's word wins)."""
        return self.setting is None and self.remembered is None


@dataclass(frozen=True)
class Capacity:
    """How many sources a notebook may hold (`value`), and where the figure comes from (`source`)."""

    value: int
    source: CapacitySource
    under: int
    """The figure a refusal is learned under: the one decided before any refusal lowered it."""
    known: KnownCapacity = field(default_factory=KnownCapacity, compare=False, repr=False)

    def refused_at(self, held: int) -> Capacity:
        """The capacity once the server refused an add as full while the notebook held `held` sources (what
        `StateStore.learn_capacity` keeps for later runs)."""
        return decide_capacity(replace(self.known, learned=LearnedCapacity(held, self.under)))


def decide_capacity(known: KnownCapacity) -> Capacity:
    """The notebook's capacity from what is `known` (see the module)."""
    if known.setting is not None:
        value, source = known.setting, CapacitySource.SETTING
    elif known.remembered is not None:
        value, source = known.remembered, CapacitySource.REMEMBERED
    else:
        value, source = (known.plan, CapacitySource.PLAN) if known.plan is not None else \
            (known.default, CapacitySource.DEFAULT)
        if known.held > value and not refused_beyond_plan(known):
            value, source = next((n for n in known.plans if n >= known.held), known.held), CapacitySource.HELD
    learned = known.learned
    if learned is not None and learned.under == value and learned.held < value:
        return Capacity(learned.held, CapacitySource.LEARNED, value, known)
    return Capacity(value, source, value, known)


def refused_beyond_plan(known: KnownCapacity) -> bool:
    """Whether the server refused an add as full while the notebook held more than the plan it reports allows: the
    notebook is not on a larger plan (what it holds would say so otherwise) but on a plan it outgrew, and the plan's
    limit is believed. A refusal at exactly a larger plan's limit is that plan's (a notebook another account owns,
    on its plan), and is not taken for one."""
    learned = known.learned
    return (known.plan is not None and learned is not None and learned.held > known.plan
            and learned.held not in known.plans)


def given_capacity(settings: Settings) -> int | None:
    """The `capacity` the user set for this run (flag, environment or config file), None when not set."""
    return settings.capacity if "capacity" in settings.model_fields_set else None


def means_full(refusal: NotebookLMError, held: int) -> bool:
    """Whether the server's refusal of an add says the notebook is full: it says so, or it refuses the add as
    an invalid argument — how NotebookLM answers an add beyond the plan's limit — while the notebook holds
    `held` sources, at least the smallest plan's limit (below it, the add itself was at fault)."""
    if isinstance(refusal, ServerCapacityError):
        return True
    return held >= SMALLEST_PLAN_LIMIT and refused_as_invalid(refusal)


def refused_as_invalid(refusal: NotebookLMError) -> bool:
    """Whether the server refused an add as an invalid argument: how NotebookLM refuses an add to a full notebook,
    and an add it cannot take for what it is."""
    return isinstance(refusal, ServerValidationError) and _INVALID_ARGUMENT.search(refusal.raw) is not None


def full_notebook_error(notebook_id: str, held: int, setting: int, later: Capacity | None = None) -> CapacityError:
    """The error of a run stopped by the server's refusal of an add as full, at `held` sources (`later`: the
    capacity later runs keep to, when the refusal changed it)."""
    if later is not None and later.source == CapacitySource.PLAN and later.value < held:
        return CapacityError(
            f"notebook {notebook_id} is full: the server refused a source at {held} sources, more than its plan "
            f"allows ({later.value}); later runs merge its packs down to fit {later.value}", hint=FULL_HINT)
    below = f", below the 'capacity' setting ({setting})" if held < setting else ""
    return CapacityError(
        f"notebook {notebook_id} is full: the server refused a source at {held} sources{below}; later runs keep "
        f"it to {held} and evict within that", hint=FULL_HINT)


def capacity_error(notebook_id: str, capacity: int) -> CapacityError:
    """The error of a notebook full of sources no eviction may take."""
    return CapacityError(
        f"notebook {notebook_id} is full (capacity {capacity} sources) and no source uploaded by "
        "nlmsync may be evicted", hint=CAPACITY_HINT)
