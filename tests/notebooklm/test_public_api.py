"""The exported names are exactly the documented ones (docs/internals.md and the cross-area contract)."""

from __future__ import annotations

from nlmsync import notebooklm
from nlmsync.notebooklm import fake


def test_notebooklm_exports() -> None:
    assert set(notebooklm.__all__) == {
        "FAKE_STATE_FILE", "IDEMPOTENT_TOOLS", "AddedSource", "CreatedNotebook", "DeletedNotebook", "DeletedSource",
        "InProcessFake", "NotebookDetails", "NotebookInfo", "NotebookLMClient", "NotebookList", "QueryAnswer", "Reference",
        "RenamedSource", "ServerInfo", "ServerTarget", "SourceContent", "SourceDescription", "SourceRef", "connect",
        "resolve_server"}
    assert all(hasattr(notebooklm, name) for name in notebooklm.__all__)


def test_fake_exports() -> None:
    assert set(fake.__all__) == {
        "DROP_EXIT_CODE", "CallPlan", "CallRecord", "DropRule", "ErrorRule", "FakeNotebookLM", "Faults",
        "RateLimitRule", "build_fake_server", "parse_drop_on", "parse_drop_on_call", "parse_error_on",
        "parse_rate_limit_on", "serve_in_process"}
    assert all(hasattr(fake, name) for name in fake.__all__)
