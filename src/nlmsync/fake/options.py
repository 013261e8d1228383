"""The fake server's switches, declared once: what `nlmsync fake-server` takes and what `--server "fake
--capacity 5 --drop-on …"` asks for.

`fake_switches` puts them on a click command — the `fake-server` command, which adds
`--transport/--host/--port` (only a separate server process has those), and the command `parse_fake_options`
reads the words after `fake` with — so both take the same switches, read them the same way and say the same
errors. `fake_options` turns the values into a `FakeOptions`; `build_faults` turns the fault switches into a
`Faults` (the pytest plugin's marker takes them too). Errors are `ValueError` with a one-line message naming
the switch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import click

from nlmsync.fake.faults import (
    OPTIONAL_TOOLS,
    Faults,
    parse_drop_on,
    parse_drop_on_call,
    parse_error_on,
    parse_rate_limit_on,
    parse_tier,
    parse_usage_used,
)

__all__ = ["FAKE_SWITCHES", "FakeOptions", "build_faults", "fake_options", "fake_switches", "parse_fake_options"]

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
