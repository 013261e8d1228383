"""The fake package exports exactly the documented names, each read from its module on first use."""

from __future__ import annotations

from nlmsync import fake


def test_fake_exports() -> None:
    assert set(fake.__all__) == {
        "DROP_EXIT_CODE", "CallPlan", "CallRecord", "DropRule", "ErrorRule", "FakeNotebookLM", "Faults",
        "RateLimitRule", "build_fake_server", "parse_drop_on", "parse_drop_on_call", "parse_error_on",
        "parse_rate_limit_on", "serve_in_process"}
    assert all(hasattr(fake, name) for name in fake.__all__)
