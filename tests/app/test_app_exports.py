"""The app package exports exactly the documented names, each defined in one of its modules."""

from __future__ import annotations

import types

from nlmsync import app


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(app.__all__) == [
        "Allowance", "AskResult", "Citation", "EvictionCandidate", "EvictionEntry", "LocalChangeEntry", "LoginWait",
        "NextStep", "NotePlacement", "NotebookSource", "Orchestrator", "PackEntry", "PlanCapacity", "ProgressSink",
        "ReconcileReport", "SelectedNote", "SourceMappingEntry", "SourcesReport", "StatusReport", "list_sources",
        "local_time", "plan_capacity", "spent_error",
    ]
    for name in app.__all__:
        value = getattr(app, name)
        assert not isinstance(value, types.ModuleType), name
        assert value.__module__.startswith("nlmsync.app."), name
