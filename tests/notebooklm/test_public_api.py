"""The client package exports exactly the documented names (docs/internals.md and the cross-area contract)."""

from __future__ import annotations

from nlmsync import notebooklm


def test_notebooklm_exports() -> None:
    assert set(notebooklm.__all__) == {
        "FAKE_STATE_FILE", "IDEMPOTENT_TOOLS", "PLAN_CAPACITIES", "AddedSource", "AuthRefreshed", "CreatedNotebook", "DeletedNotebook",
        "DeletedSource", "InProcessFake", "NotebookDetails", "NotebookInfo", "NotebookLMClient", "NotebookList", "Plan",
        "QueryAnswer", "Reference", "RenamedSource", "ServerInfo", "ServerTarget", "SourceContent", "SourceDescription",
        "SourceRef", "Usage", "UsageWindow", "connect", "login_command", "plan_for_tier", "resolve_server"}
    assert all(hasattr(notebooklm, name) for name in notebooklm.__all__)
