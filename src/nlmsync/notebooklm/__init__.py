"""The NotebookLM side: a typed MCP client with its retry policy, and its transports.

`connect(spec, settings, state_dir=...)` gives a `NotebookLMClient`; failures are the `NotebookLMError`
subclasses of `nlmsync.errors`. `Usage` is the plan's allowance and tier as `usage_get` reports them, `Plan` the
sources per notebook a tier allows; `login_command` how the user runs the real server's login from a shell. The
fake server lives in `nlmsync.fake`.
"""

from nlmsync.notebooklm.client import NotebookLMClient, connect
from nlmsync.notebooklm.models import (
    AddedSource,
    AuthRefreshed,
    CreatedNotebook,
    DeletedNotebook,
    DeletedSource,
    NotebookDetails,
    NotebookInfo,
    NotebookList,
    QueryAnswer,
    Reference,
    RenamedSource,
    ServerInfo,
    SourceContent,
    SourceDescription,
    SourceRef,
    Usage,
    UsageWindow,
)
from nlmsync.notebooklm.plans import PLAN_CAPACITIES, Plan, plan_for_tier
from nlmsync.notebooklm.retry import IDEMPOTENT_TOOLS
from nlmsync.notebooklm.transports import (
    FAKE_STATE_FILE,
    InProcessFake,
    ServerTarget,
    login_command,
    resolve_server,
)

__all__ = [
    "FAKE_STATE_FILE",
    "IDEMPOTENT_TOOLS",
    "PLAN_CAPACITIES",
    "AddedSource",
    "AuthRefreshed",
    "CreatedNotebook",
    "DeletedNotebook",
    "DeletedSource",
    "InProcessFake",
    "NotebookDetails",
    "NotebookInfo",
    "NotebookLMClient",
    "NotebookList",
    "Plan",
    "QueryAnswer",
    "Reference",
    "RenamedSource",
    "ServerInfo",
    "ServerTarget",
    "SourceContent",
    "SourceDescription",
    "SourceRef",
    "Usage",
    "UsageWindow",
    "connect",
    "login_command",
    "plan_for_tier",
    "resolve_server",
]
