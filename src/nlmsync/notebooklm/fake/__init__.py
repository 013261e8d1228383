"""The fake NotebookLM MCP server: state and tool logic, fault switches, offline answers, the MCP server.

The names below are imported on first use (like `store`, `search` and `sync`), so the app can hand the client
`serve_in_process` without loading the fake for a run against a real server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.notebooklm.fake.faults import (
        CallPlan,
        DropRule,
        ErrorRule,
        Faults,
        RateLimitRule,
        parse_drop_on,
        parse_drop_on_call,
        parse_error_on,
        parse_rate_limit_on,
    )
    from nlmsync.notebooklm.fake.in_process import serve_in_process
    from nlmsync.notebooklm.fake.server import DROP_EXIT_CODE, build_fake_server
    from nlmsync.notebooklm.fake.state import CallRecord, FakeNotebookLM

_EXPORTS = {
    "CallPlan": "nlmsync.notebooklm.fake.faults",
    "DropRule": "nlmsync.notebooklm.fake.faults",
    "ErrorRule": "nlmsync.notebooklm.fake.faults",
    "Faults": "nlmsync.notebooklm.fake.faults",
    "RateLimitRule": "nlmsync.notebooklm.fake.faults",
    "parse_drop_on": "nlmsync.notebooklm.fake.faults",
    "parse_drop_on_call": "nlmsync.notebooklm.fake.faults",
    "parse_error_on": "nlmsync.notebooklm.fake.faults",
    "parse_rate_limit_on": "nlmsync.notebooklm.fake.faults",
    "serve_in_process": "nlmsync.notebooklm.fake.in_process",
    "DROP_EXIT_CODE": "nlmsync.notebooklm.fake.server",
    "build_fake_server": "nlmsync.notebooklm.fake.server",
    "CallRecord": "nlmsync.notebooklm.fake.state",
    "FakeNotebookLM": "nlmsync.notebooklm.fake.state",
}

__all__ = [
    "DROP_EXIT_CODE",
    "CallPlan",
    "CallRecord",
    "DropRule",
    "ErrorRule",
    "FakeNotebookLM",
    "Faults",
    "RateLimitRule",
    "build_fake_server",
    "parse_drop_on",
    "parse_drop_on_call",
    "parse_error_on",
    "parse_rate_limit_on",
    "serve_in_process",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
