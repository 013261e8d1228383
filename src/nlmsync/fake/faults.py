"""Fault switches of the fake NotebookLM server and the pure decision of what happens to each call.

A `Faults` value says what to inject; `plan_call(faults, counters, tool)` counts the call (overall and per
tool, 1-based) and returns the `CallPlan` for it. Counters live in the fake's state, so with a `--state` file
"the Nth call" counts across server restarts — a client that reconnects after a drop does not meet the same
fault again. The calls made on the current Google login are counted too (`LOGIN_COUNTER`), for a login that
expires after N calls; `fake/account.py` answers the login and plan tools. The `parse_*` functions read the CLI
forms and raise `ValueError` with a one-line message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import PurePath
from typing import Literal

__all__ = [
    "CallPlan",
    "DropRule",
    "ErrorRule",
    "Faults",
    "RateLimitRule",
    "parse_drop_on",
    "parse_drop_on_call",
    "parse_error_on",
    "parse_rate_limit_on",
    "parse_tier",
    "parse_usage_used",
    "plan_call",
]

When = Literal["before", "after"]

LOGIN_COUNTER = "@login"
"""The counter of the calls made on the current login (a key no tool name takes)."""
MADE_ELSEWHERE = "@login-made-elsewhere"
"""Set (1) once `refresh_auth` found the login made elsewhere: that login does not expire."""
LOGIN_FREE_TOOLS = frozenset({"server_info", "refresh_auth"})
"""Tools that do not use the Google login (they report or renew it)."""
OPTIONAL_TOOLS = frozenset({"refresh_auth", "usage_get"})
"""Tools an older real server lacks: `--without-tool` leaves them out."""
USAGE_WINDOWS = ("rolling", "weekly")
# `--tier` words and the tier `usage_get` then reports, named as the real server names the Pro tier.
TIERS: dict[str, str | None] = {"none": None, **{word: f"NOTEBOOKLM_TIER_{word.upper()}_CONSUMER_USER"
                                                 for word in ("standard", "plus", "pro", "ultra")}}


@dataclass(frozen=True)
class DropRule:
    """Drop the connection on call number `nth` of `tool` (or of all calls when `tool` is None)."""

    nth: int
    tool: str | None = None
    when: When = "before"


@dataclass(frozen=True)
class ErrorRule:
    """Answer `tool` with an in-band error: on its `nth` call only, or on every call when `nth` is None."""

    tool: str
    message: str
    nth: int | None = None


@dataclass(frozen=True)
class RateLimitRule:
    """Answer `tool` with a RESOURCE_EXHAUSTED error: on its `nth` call only, or always when `nth` is None."""

    tool: str
    nth: int | None = None


@dataclass
class Faults:
    """Everything the fake can be told to get wrong. The defaults inject nothing."""

    latency: float = 0.0
    drops: list[DropRule] = field(default_factory=list)
    errors: list[ErrorRule] = field(default_factory=list)
    rate_limits: list[RateLimitRule] = field(default_factory=list)
    empty_sources_once: bool = False
    auth_required: bool = False
    expire_login_after: int | None = None
    """The login expires after this many calls that use it; a renewal (`refresh_auth`) starts a new one."""
    renewal_fails: bool = False
    """`refresh_auth` cannot renew an expired login (as when the saved browser profile is signed out too)."""
    login_back_after: int | None = None
    """`refresh_auth`'s Nth call finds a login made elsewhere (`nlm login` in another terminal), which lasts."""
    usage_used: dict[str, float] = field(default_factory=dict)
    """Percent used of each allowance window `usage_get` reports (rolling, weekly; 0 when not given)."""
    tier: str | None = None
    """The subscription tier `usage_get` reports (None: an account without a paid plan)."""
    without_tools: frozenset[str] = frozenset()
    """Tools the server does not have, as an older server lacks them (set when the server is built)."""
    network_down: bool = False
    """The server's requests to Google fail for want of a network: every tool but `server_info` says so."""
    file_titles_ignored: bool = False
    """The rename that gives a file source the title asked for does not take: the source keeps its file name,
    while `source_add` answers with the title (the real server renames after the upload, best effort)."""
    processing_polls: int = 0
    """An audio or video file takes this many of the server's status polls to process (`fake/files.py`): an
    add that waits answers once it is processed, or with the real server's "not ready" error once its
    `wait_timeout` has passed (the real server polls every 3 s)."""
    processing_fails: tuple[str, ...] = ()
    """Globs (`fnmatch`, case-sensitive) of the uploaded files NotebookLM fails to process, matched against the
    file's name and against its whole path: such a file is added as a source that failed to process."""

    def fails_processing(self, file_path: str) -> bool:
        """Whether `processing_fails` names the file uploaded from `file_path`."""
        name = PurePath(file_path).name
        return any(fnmatchcase(name, glob) or fnmatchcase(file_path, glob) for glob in self.processing_fails)


@dataclass(frozen=True)
class CallPlan:
    """What to do with one call: wait, maybe drop before/after applying, or answer with an in-band error.

    `deadline_exceeded` is set by the server when the latency outlasts a query's own `timeout` budget.
    """

    call_number: int
    tool_call_number: int
    latency: float = 0.0
    drop: When | None = None
    error: str | None = None
    rate_limited: bool = False
    auth_required: bool = False
    login_expired: bool = False
    network_down: bool = False
    deadline_exceeded: bool = False


def plan_call(faults: Faults, counters: dict[str, int], tool: str) -> CallPlan:
    """Count this call in `counters` (key "*" = all calls) and decide its faults."""
    overall = counters["*"] = counters.get("*", 0) + 1
    per_tool = counters[tool] = counters.get(tool, 0) + 1
    drop: When | None = None
    for rule in faults.drops:
        if (rule.tool is None and rule.nth == overall) or (rule.tool == tool and rule.nth == per_tool):
            drop = rule.when
            break
    error = next((r.message for r in faults.errors if r.tool == tool and r.nth in (None, per_tool)), None)
    rate_limited = any(r.tool == tool and r.nth in (None, per_tool) for r in faults.rate_limits)
    return CallPlan(call_number=overall, tool_call_number=per_tool, latency=faults.latency, drop=drop,
                    error=error, rate_limited=rate_limited,
                    auth_required=faults.auth_required and tool not in LOGIN_FREE_TOOLS,
                    login_expired=_uses_expired_login(faults, counters, tool),
                    network_down=faults.network_down and tool != "server_info")


def _uses_expired_login(faults: Faults, counters: dict[str, int], tool: str) -> bool:
    """Count a call on the current login; True when the login has expired (such a call is not counted)."""
    if faults.expire_login_after is None or tool in LOGIN_FREE_TOOLS or counters.get(MADE_ELSEWHERE):
        return False
    used = counters.get(LOGIN_COUNTER, 0)
    if used >= faults.expire_login_after:
        return True
    counters[LOGIN_COUNTER] = used + 1
    return False


def _positive(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what}: '{text}' is not a number") from None
    if value < 1:
        raise ValueError(f"{what}: call numbers start at 1, got {value}")
    return value


def _when(text: str, what: str) -> When:
    if text not in ("before", "after"):
        raise ValueError(f"{what}: expected 'before' or 'after', got '{text}'")
    return "before" if text == "before" else "after"


def parse_drop_on_call(spec: str) -> DropRule:
    """`N[:before|after]` — drop on the Nth call overall."""
    number, _, when = spec.partition(":")
    return DropRule(nth=_positive(number, "--drop-on-call"), when=_when(when or "before", "--drop-on-call"))


def parse_drop_on(spec: str) -> DropRule:
    """`TOOL:N[:before|after]` — drop on TOOL's Nth call."""
    parts = spec.split(":")
    if len(parts) not in (2, 3) or not parts[0]:
        raise ValueError(f"--drop-on: expected TOOL:N[:before|after], got '{spec}'")
    when = _when(parts[2], "--drop-on") if len(parts) == 3 else "before"
    return DropRule(nth=_positive(parts[1], "--drop-on"), tool=parts[0], when=when)


def parse_error_on(spec: str) -> ErrorRule:
    """`TOOL[:N]=MESSAGE` — in-band error for TOOL (its Nth call, or every call)."""
    target, sep, message = spec.partition("=")
    if not sep or not target or not message:
        raise ValueError(f"--error-on: expected TOOL[:N]=MESSAGE, got '{spec}'")
    tool, _, number = target.partition(":")
    return ErrorRule(tool=tool, message=message, nth=_positive(number, "--error-on") if number else None)


def parse_rate_limit_on(spec: str) -> RateLimitRule:
    """`TOOL[:N]` — rate-limit error for TOOL (its Nth call, or every call)."""
    tool, _, number = spec.partition(":")
    if not tool:
        raise ValueError(f"--rate-limit-on: expected TOOL[:N], got '{spec}'")
    return RateLimitRule(tool=tool, nth=_positive(number, "--rate-limit-on") if number else None)


def parse_usage_used(spec: str) -> tuple[str, float]:
    """`WINDOW=PERCENT` — how much of an allowance window is used (rolling or weekly, 0 to 100)."""
    window, sep, number = spec.partition("=")
    if not sep or window not in USAGE_WINDOWS:
        raise ValueError(f"--usage-used: expected rolling=PERCENT or weekly=PERCENT, got '{spec}'")
    try:
        percent = float(number)
    except ValueError:
        raise ValueError(f"--usage-used: '{number}' is not a number") from None
    if not 0 <= percent <= 100:
        raise ValueError(f"--usage-used: a percentage from 0 to 100, got {number}")
    return window, percent


def parse_tier(word: str) -> str | None:
    """`none`, `standard`, `plus`, `pro`, `ultra`, or a tier as the real server reports it (`NOTEBOOKLM_TIER_…`)."""
    if word.startswith("NOTEBOOKLM_TIER_"):
        return word
    if word.lower() not in TIERS:
        raise ValueError(f"--tier: expected one of {', '.join(TIERS)} or NOTEBOOKLM_TIER_…, got '{word}'")
    return TIERS[word.lower()]
