"""The fake NotebookLM MCP server: state and tool logic, fault switches, offline answers, the MCP server.

The names below are imported on first use (like `store`, `search` and `sync`): a run against a real server
loads none of the fake.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.fake.faults import (
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
    from nlmsync.fake.server import DROP_EXIT_CODE, build_fake_server, serve_in_process
    from nlmsync.fake.state import CallRecord, FakeNotebookLM

_EXPORTS = {
    "CallPlan": "nlmsync.fake.faults",
    "DropRule": "nlmsync.fake.faults",
    "ErrorRule": "nlmsync.fake.faults",
    "Faults": "nlmsync.fake.faults",
    "RateLimitRule": "nlmsync.fake.faults",
    "parse_drop_on": "nlmsync.fake.faults",
    "parse_drop_on_call": "nlmsync.fake.faults",
    "parse_error_on": "nlmsync.fake.faults",
    "parse_rate_limit_on": "nlmsync.fake.faults",
    "DROP_EXIT_CODE": "nlmsync.fake.server",
    "build_fake_server": "nlmsync.fake.server",
    "serve_in_process": "nlmsync.fake.server",
    "CallRecord": "nlmsync.fake.state",
    "FakeNotebookLM": "nlmsync.fake.state",
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
