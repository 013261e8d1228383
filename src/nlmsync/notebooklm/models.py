"""Typed results of the NotebookLM MCP tools nlmsync uses, and the one parser that checks them.

The shapes follow the real server (`notebooklm-mcp-cli` 0.15.8, see `../shared/protocol/`): every tool
answers one JSON object with `status: "success"` plus the fields below. Extra fields are ignored, a missing
or mistyped field raises `MalformedResponseError` naming it (`parse_result`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from nlmsync.errors import MalformedResponseError
from nlmsync.notebooklm.classify import doing
from nlmsync.notebooklm.plans import Plan, plan_for_tier

__all__ = [
    "AddedSource",
    "AuthRefreshed",
    "CreatedNotebook",
    "DeletedNotebook",
    "DeletedSource",
    "NotebookDetails",
    "NotebookInfo",
    "NotebookList",
    "QueryAnswer",
    "Reference",
    "RenamedSource",
    "ServerInfo",
    "SourceContent",
    "SourceDescription",
    "SourceRef",
    "Usage",
    "UsageWindow",
    "parse_result",
]


class _Result(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class ServerInfo(_Result):
    """`server_info`: version and login state (`auth_status`: configured, stale, unverified, not_configured, error)."""

    version: str
    latest_version: str | None = None
    update_available: bool = False
    auth_status: str = "unknown"


class AuthRefreshed(_Result):
    """`refresh_auth`: the login works again (`message` says how: reloaded from disk, or renewed)."""

    message: str = ""


class NotebookInfo(_Result):
    id: str
    title: str
    source_count: int = 0
    url: str | None = None


class SourceRef(_Result):
    """One source of a notebook. The real server passes NotebookLM's title through unchecked, so a source
    without one (null) reads as "" — it cannot be one of nlmsync's titled uploads — instead of making the
    whole listing malformed."""

    id: str
    title: str

    @field_validator("title", mode="before")
    @classmethod
    def _untitled(cls, value: Any) -> Any:
        return "" if value is None else value


class NotebookDetails(_Result):
    """`notebook_get`: the notebook and its sources (ids and titles)."""

    notebook: NotebookInfo
    sources: list[SourceRef]


class NotebookList(_Result):
    notebooks: list[NotebookInfo]


class CreatedNotebook(_Result):
    notebook_id: str
    notebook: NotebookInfo
    message: str = ""

    @property
    def title(self) -> str:
        return self.notebook.title


class DeletedNotebook(_Result):
    message: str = ""


class AddedSource(_Result):
    source_id: str
    title: str
    source_type: str = "text"
    ready: bool = False


class DeletedSource(_Result):
    message: str = ""
    deleted_count: int | None = None


class RenamedSource(_Result):
    source_id: str
    title: str


class SourceContent(_Result):
    content: str
    title: str
    source_type: str = "unknown"
    char_count: int


class SourceDescription(_Result):
    summary: str
    keywords: list[str] = Field(default_factory=list)


class Reference(_Result):
    """One cited passage of an answer; `cited_text` is absent when NotebookLM gave none."""

    source_id: str
    citation_number: int
    cited_text: str | None = None


class QueryAnswer(_Result):
    """`notebook_query`: the answer, the conversation to continue, and which sources it cited.

    `citations` maps a citation number (as a string, like the JSON on the wire) to a source id.
    """

    answer: str
    question: str | None = None
    conversation_id: str | None = None
    sources_used: list[str] = Field(default_factory=list)
    citations: dict[str, str] = Field(default_factory=dict)
    references: list[Reference] = Field(default_factory=list)

    @field_validator("citations", mode="before")
    @classmethod
    def _string_keys(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {str(key): item for key, item in value.items()}
        return value


class UsageWindow(_Result):
    """One window of `usage_get`'s allowance: NotebookLM meters questions as compute against two at once, a short
    rolling one (about five hours) and a weekly one, each with the share used and left and its reset time (ISO
    8601, UTC). The server reports a figure it did not get as null: unknown, not zero."""

    window: str
    percent_used: float | None = None
    percent_remaining: float | None = None
    resets_at: datetime | None = None

    @property
    def spent(self) -> bool:
        """Nothing is left in this window: a question sent now would be refused."""
        if self.percent_remaining is not None:
            return self.percent_remaining <= 0
        return self.percent_used is not None and self.percent_used >= 100


class Usage(_Result):
    """`usage_get`: the allowance's windows (rolling first) and the subscription tier."""

    windows: list[UsageWindow] = Field(default_factory=list)
    tier: str | None = None

    @property
    def plan(self) -> Plan:
        return plan_for_tier(self.tier)

    def spent_window(self) -> UsageWindow | None:
        """The window that holds questions back longest (the spent one resetting last), or None when every
        window has something left."""
        spent = [w for w in self.windows if w.spent]
        unknown = next((w for w in spent if w.resets_at is None), None)
        if unknown is not None or not spent:
            return unknown
        return max(spent, key=lambda w: w.resets_at.timestamp() if w.resets_at is not None else 0.0)


ResultT = TypeVar("ResultT", bound=_Result)


def _field_name(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(result)"


def parse_result(tool: str, model: type[ResultT], payload: dict[str, Any]) -> ResultT:
    """Validate one successful tool result against its model.

    Raises:
        MalformedResponseError: a field is missing or has the wrong type; the message names the field.
    """
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = _field_name(tuple(first.get("loc") or ()))
        problem = "missing" if first.get("type") == "missing" else first.get("msg", "invalid").lower()
        raise MalformedResponseError(f"{doing(tool)}: malformed response from the server: field '{field}' {problem}",
                                     tool=tool, raw=str(payload)[:500]) from None
