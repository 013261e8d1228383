"""The fake NotebookLM MCP server: state and tool logic, fault switches, offline answers, the MCP server."""

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
from nlmsync.notebooklm.fake.server import DROP_EXIT_CODE, build_fake_server
from nlmsync.notebooklm.fake.state import CallRecord, FakeNotebookLM

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
]
