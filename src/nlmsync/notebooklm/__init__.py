"""The NotebookLM side: a typed MCP client with its retry policy, and its transports.

`connect(spec, settings, state_dir=...)` gives a `NotebookLMClient`; failures are the `NotebookLMError`
subclasses of `nlmsync.errors`. The fake server lives in `nlmsync.fake`.
"""

from nlmsync.notebooklm.client import NotebookLMClient, connect
from nlmsync.notebooklm.models import (
    AddedSource,
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
)
from nlmsync.notebooklm.retry import IDEMPOTENT_TOOLS
from nlmsync.notebooklm.transports import FAKE_STATE_FILE, InProcessFake, ServerTarget, resolve_server

__all__ = [
    "FAKE_STATE_FILE",
    "IDEMPOTENT_TOOLS",
    "AddedSource",
    "CreatedNotebook",
    "DeletedNotebook",
    "DeletedSource",
    "InProcessFake",
    "NotebookDetails",
    "NotebookInfo",
    "NotebookLMClient",
    "NotebookList",
    "QueryAnswer",
    "Reference",
    "RenamedSource",
    "ServerInfo",
    "ServerTarget",
    "SourceContent",
    "SourceDescription",
    "SourceRef",
    "connect",
    "resolve_server",
]
