"""The app layer: one `Orchestrator` per run (select → ensure sources → query → record), used by the CLI,
`watch` and `serve`, and the results its runs answer.

- `orchestrator`: `Orchestrator` (`refresh`, `ask`, `status`, `reconcile`, `keep_current`, `listing`), and
  `held_writer`, the store's writer lock waited for without blocking the event loop.
- `progress`: `ProgressSink`, where a run reports its progress.
- `results`: the pydantic models of `ask`, `status` and `reconcile` (`refresh` answers sync's `RefreshReport`).
- `notebooks`: which notebook a run works on (`--notebook ID`, `new:TITLE`, the default) and the error for
  one the server does not know.
- `refresh_notes`: which notes a `refresh` covers, and the part of the vault `--all PATH…` answers for.
- `servers`: the NotebookLM client a run talks to, with `--server fake` served by the bundled fake.
- `citations`: an answer's citations mapped back to vault notes and headings.
- `follow_up`: whether a question follows up the latest conversation, or starts a new one.
- `messages`: what `status` proposes to do next, and the line of a partly failed refresh.
- `sources`: `list_sources`, what the notebook holds source by source (`nlmsync sources`).
- `answer_notes`: `ask --save`, an answer kept in the vault as a note with links to what it cites.
- `allowance`: the plan's usage allowance (`Allowance`, read briefly once, respected before a question) and
  the sources per notebook of its tier (`plan_capacity`).
- `login_wait`: `LoginWait`, how `watch --refresh` and `serve` wait for a login made elsewhere.
"""

from nlmsync.app.allowance import Allowance, PlanCapacity, local_time, plan_capacity, spent_error
from nlmsync.app.login_wait import LoginWait
from nlmsync.app.orchestrator import Orchestrator
from nlmsync.app.progress import ProgressSink
from nlmsync.app.results import (
    AskResult,
    Citation,
    EvictionCandidate,
    EvictionEntry,
    LocalChangeEntry,
    NextStep,
    NotebookSource,
    NotePlacement,
    PackEntry,
    ReconcileReport,
    SelectedNote,
    SourceMappingEntry,
    SourcesReport,
    StatusReport,
)
from nlmsync.app.sources import list_sources

__all__ = [
    "Allowance",
    "AskResult",
    "Citation",
    "EvictionCandidate",
    "EvictionEntry",
    "LocalChangeEntry",
    "LoginWait",
    "NextStep",
    "NotePlacement",
    "NotebookSource",
    "Orchestrator",
    "PackEntry",
    "PlanCapacity",
    "ProgressSink",
    "ReconcileReport",
    "SelectedNote",
    "SourceMappingEntry",
    "SourcesReport",
    "StatusReport",
    "list_sources",
    "local_time",
    "plan_capacity",
    "spent_error",
]
