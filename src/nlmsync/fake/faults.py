"""The fake NotebookLM server's switches and faults: the switches declared once, what they inject (`Faults`), and
the pure decision of what happens to each call.

A `Faults` value says what to inject; `plan_call(faults, counters, tool)` counts the call (overall and per
tool, 1-based) and returns the `CallPlan` for it. Counters live in the fake's state, so with a `--state` file
"the Nth call" counts across server restarts — a client that reconnects after a drop does not meet the same
fault again. The calls made on the current Google login are counted too (`LOGIN_COUNTER`), for a login that
expires after N calls; `fake/account.py` answers the login and plan tools. The `parse_*` functions read the CLI
forms and raise `ValueError` with a one-line message.

The switches are declared once, for what `nlmsync fake-server` takes and what `--server "fake --capacity 5
--drop-on …"` asks for: `fake_switches` puts them on a click command — the `fake-server` command, which adds
`--transport/--host/--port` (only a separate server process has those), and the command `parse_fake_options`
reads the words after `fake` with — so both take the same switches, read them the same way and say the same
errors. `fake_options` turns the values into a `FakeOptions`; `build_faults` turns the fault switches into a
`Faults` (the pytest plugin's marker takes them too).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePath
from typing import Any, Literal, TypeVar

import click

__all__ = [
    "FAKE_SWITCHES",
    "CallPlan",
    "DropRule",
    "ErrorRule",
    "FakeOptions",
    "Faults",
    "RateLimitRule",
    "build_faults",
    "fake_options",
    "fake_switches",
    "parse_drop_on",
    "parse_drop_on_call",
    "parse_error_on",
    "parse_fake_options",
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


F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_CAPACITY = 50

# Each switch: its name and click's settings for it, in the order `fake-server --help` lists them.
_SWITCHES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("--state", {"type": click.Path(path_type=Path), "metavar": "FILE",
                 "help": "Keep notebooks, sources, the call log and fault counters in this JSON file: each change is "
                         "appended to FILE.journal at once, and the file is rewritten atomically before a drop and "
                         "when the server stops. Default: memory only."}),
    ("--capacity", {"type": click.IntRange(min=1), "default": DEFAULT_CAPACITY, "help": "Sources per notebook."}),
    ("--latency", {"type": click.FloatRange(min=0.0), "default": 0.0,
                   "help": "Seconds to wait before every call. A notebook_query whose timeout is shorter answers "
                           "'deadline exceeded' when its budget runs out, like the real server."}),
    ("--drop-on-call", {"metavar": "N[:before|after]",
                        "help": "Drop the connection (the server process exits at once, over stdio and http alike, "
                                "with code 75) on the Nth call overall, before applying it (default) or after "
                                "applying it with the answer lost."}),
    ("--drop-on", {"multiple": True, "metavar": "TOOL:N[:before|after]",
                   "help": "Drop the connection on TOOL's Nth call, before or after applying it. Repeatable."}),
    ("--error-on", {"multiple": True, "metavar": "TOOL[:N]=MESSAGE",
                    "help": "Answer TOOL (its Nth call, or every call) with the in-band error MESSAGE. Repeatable."}),
    ("--empty-sources-once", {"is_flag": True,
                              "help": "The first notebook_get of a non-empty notebook lists no sources."}),
    ("--auth-required", {"is_flag": True,
                         "help": "Act like a server without a Google login: every tool but server_info fails with "
                                 "'No authentication found'."}),
    ("--rate-limit-on", {"multiple": True, "metavar": "TOOL[:N]",
                         "help": "Answer TOOL (its Nth call, or every call) with a RESOURCE_EXHAUSTED rate-limit "
                                 "error. Repeatable."}),
    ("--expire-login-after", {"type": int, "metavar": "N",
                              "help": "The Google login expires after N calls that use it (0: expired from the "
                                      "start): later calls answer 'Authentication expired' until refresh_auth renews "
                                      "it (a new login of N calls)."}),
    ("--renewal-fails", {"is_flag": True, "help": "refresh_auth cannot renew an expired login."}),
    ("--login-back-after", {"type": int, "metavar": "N",
                            "help": "refresh_auth's Nth call finds a login made elsewhere (nlm login in another "
                                    "terminal), even with --renewal-fails; that login does not expire."}),
    ("--usage-used", {"multiple": True, "metavar": "WINDOW=PERCENT",
                      "help": "Percent used of the rolling or weekly usage window usage_get reports (default 0); "
                              "at 100 notebook_query is refused for a usage limit, as NotebookLM refuses it. "
                              "Repeatable."}),
    ("--tier", {"metavar": "PLAN", "help": "The tier usage_get reports: none (the default), standard, plus, pro, "
                                           "ultra, or NOTEBOOKLM_TIER_…."}),
    ("--without-tool", {"multiple": True, "metavar": "TOOL",
                        "help": "Leave out refresh_auth or usage_get, as an older server lacks them. Repeatable."}),
    ("--network-down", {"is_flag": True,
                        "help": "Act like a server whose requests to Google fail (no network): every tool but "
                                "server_info answers '[Errno -2] Name or service not known'."}),
    ("--file-titles-ignored", {"is_flag": True,
                               "help": "The title asked for a file source does not take: the source keeps its file "
                                       "name, though source_add answers with the title (the real server applies it "
                                       "by a rename after the upload, which can fail silently)."}),
    ("--processing-polls", {"type": click.IntRange(min=0), "default": 0, "metavar": "N",
                            "help": "An audio or video file takes N of the server's status polls to process: an "
                                    "add that waits answers once it is processed, or, when N polls 3 s apart "
                                    "outlast its wait_timeout, with the real server's 'not ready' error. A poll "
                                    "passes each time the fake answers another call, at once when none is under "
                                    "way."}),
    ("--processing-fails", {"multiple": True, "metavar": "GLOB",
                            "help": "NotebookLM fails to process an uploaded file whose name (or path) matches GLOB: "
                                    "the source stays, named after its file and holding no text, and an add that "
                                    "waits (any add with a title) answers the real server's 'failed to process' "
                                    "error. Repeatable."}),
)

FAKE_SWITCHES = frozenset(name for name, _settings in _SWITCHES)


@dataclass(frozen=True)
class FakeOptions:
    """A fake server's capacity, fault switches and state file (None: the caller's default)."""

    capacity: int = DEFAULT_CAPACITY
    faults: Faults = field(default_factory=Faults)
    state: Path | None = None


def fake_switches(function: F) -> F:
    """`function`, a click command's callback, with the fake's switches as its options (the values reach it as
    keywords: `state`, `capacity`, `latency`, `drop_on_call`, `drop_on`, `error_on`, `empty_sources_once`,
    `auth_required`, `rate_limit_on`, `expire_login_after`, `renewal_fails`, `login_back_after`, `usage_used`,
    `tier`, `without_tool`, `network_down`, `file_titles_ignored`, `processing_polls`, `processing_fails`;
    `fake_options` reads them)."""
    for name, settings in reversed(_SWITCHES):
        function = click.option(name, **settings)(function)
    return function


def build_faults(*, latency: float = 0.0, drop_on_call: str | None = None, drop_on: Sequence[str] = (),
                 error_on: Sequence[str] = (), rate_limit_on: Sequence[str] = (), empty_sources_once: bool = False,
                 auth_required: bool = False, expire_login_after: int | None = None, renewal_fails: bool = False,
                 login_back_after: int | None = None, usage_used: Sequence[str] = (), tier: str | None = None,
                 without_tool: Sequence[str] = (), network_down: bool = False,
                 file_titles_ignored: bool = False, processing_polls: int = 0,
                 processing_fails: Sequence[str] = ()) -> Faults:
    """The `Faults` the fault switches describe.

    Raises:
        ValueError: a switch's value cannot be read (the message names the switch).
    """
    drops = [parse_drop_on(spec) for spec in drop_on]
    if drop_on_call is not None:
        drops.insert(0, parse_drop_on_call(drop_on_call))
    if expire_login_after is not None and expire_login_after < 0:
        raise ValueError(f"--expire-login-after: must not be negative, got {expire_login_after}")
    if login_back_after is not None and login_back_after < 1:
        raise ValueError(f"--login-back-after: call numbers start at 1, got {login_back_after}")
    if isinstance(processing_fails, str):  # a marker's keyword given one glob, not a list of them
        raise ValueError(f"--processing-fails: expected a list of file names or globs, got '{processing_fails}'")
    if "" in processing_fails:
        raise ValueError("--processing-fails: a file name or glob must not be empty")
    unknown = sorted(set(without_tool) - OPTIONAL_TOOLS)
    if unknown:
        raise ValueError(f"--without-tool: expected {' or '.join(sorted(OPTIONAL_TOOLS))}, got '{unknown[0]}'")
    return Faults(latency=latency, drops=drops, errors=[parse_error_on(spec) for spec in error_on],
                  rate_limits=[parse_rate_limit_on(spec) for spec in rate_limit_on],
                  empty_sources_once=empty_sources_once, auth_required=auth_required,
                  expire_login_after=expire_login_after, renewal_fails=renewal_fails,
                  login_back_after=login_back_after, usage_used=dict(parse_usage_used(s) for s in usage_used),
                  tier=parse_tier(tier) if tier is not None else None, without_tools=frozenset(without_tool),
                  network_down=network_down, file_titles_ignored=file_titles_ignored,
                  processing_polls=processing_polls, processing_fails=tuple(processing_fails))


def fake_options(values: Mapping[str, Any]) -> FakeOptions:
    """The options the values of the fake's switches (as click passes them, by name) ask for.

    Raises:
        ValueError: a fault switch's value cannot be read (the message names the switch).
    """
    faults = build_faults(**{key: value for key, value in values.items() if key not in ("capacity", "state")})
    return FakeOptions(capacity=values["capacity"], faults=faults, state=values["state"])


@click.command("fake", context_settings={"help_option_names": []})
@fake_switches
def _switch_reader(**values: Any) -> None:
    """The words after `fake`: read by `parse_fake_options`, never run."""


def parse_fake_options(words: Sequence[str]) -> FakeOptions:
    """The options `words` (the switches after `fake`) ask for.

    Raises:
        ValueError: an unknown switch or a value that cannot be read (one line, naming the switch).
    """
    try:
        with _switch_reader.make_context("fake", list(words)) as context:
            values = dict(context.params)
    except click.ClickException as exc:
        raise ValueError(" ".join(exc.format_message().split())) from None
    return fake_options(values)
