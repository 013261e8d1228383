"""The fake server's switches as words: what `--server "fake --capacity 5 --drop-on …"` asks for.

`parse_fake_options(words)` reads the same switches as `nlmsync fake-server` (capacity, state file and every
fault switch; not `--transport/--host/--port`, which only a separate server process has) and `build_faults`
turns the fault switches into a `Faults`, for both. Errors are `ValueError` with a one-line message naming
the switch.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from nlmsync.fake.faults import (
    Faults,
    parse_drop_on,
    parse_drop_on_call,
    parse_error_on,
    parse_rate_limit_on,
)

__all__ = ["FAKE_SWITCHES", "FakeOptions", "build_faults", "parse_fake_options"]

DEFAULT_CAPACITY = 50


@dataclass(frozen=True)
class FakeOptions:
    """A fake server's capacity, fault switches and state file (None: the caller's default)."""

    capacity: int = DEFAULT_CAPACITY
    faults: Faults = field(default_factory=Faults)
    state: Path | None = None


def build_faults(*, latency: float = 0.0, drop_on_call: str | None = None, drop_on: Sequence[str] = (),
                 error_on: Sequence[str] = (), rate_limit_on: Sequence[str] = (), empty_sources_once: bool = False,
                 auth_required: bool = False) -> Faults:
    """The `Faults` the fault switches describe.

    Raises:
        ValueError: a switch's value cannot be read (the message names the switch).
    """
    drops = [parse_drop_on(spec) for spec in drop_on]
    if drop_on_call is not None:
        drops.insert(0, parse_drop_on_call(drop_on_call))
    return Faults(latency=latency, drops=drops, errors=[parse_error_on(spec) for spec in error_on],
                  rate_limits=[parse_rate_limit_on(spec) for spec in rate_limit_on],
                  empty_sources_once=empty_sources_once, auth_required=auth_required)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ValueError(message)


def _parser() -> _Parser:
    parser = _Parser(prog="fake", add_help=False, allow_abbrev=False, exit_on_error=False)
    parser.add_argument("--state", type=Path)
    parser.add_argument("--capacity", type=int, default=DEFAULT_CAPACITY)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--drop-on-call")
    parser.add_argument("--drop-on", action="append", default=[])
    parser.add_argument("--error-on", action="append", default=[])
    parser.add_argument("--rate-limit-on", action="append", default=[])
    parser.add_argument("--empty-sources-once", action="store_true")
    parser.add_argument("--auth-required", action="store_true")
    return parser


FAKE_SWITCHES = frozenset(option for action in _parser()._actions for option in action.option_strings)


def parse_fake_options(words: Sequence[str]) -> FakeOptions:
    """The options `words` (the switches after `fake`) ask for.

    Raises:
        ValueError: an unknown switch or a value that cannot be read (one line, naming the switch).
    """
    try:
        args = _parser().parse_args(list(words))
    except argparse.ArgumentError as exc:
        raise ValueError(str(exc)) from None
    if args.capacity < 1:
        raise ValueError(f"--capacity: must be at least 1, got {args.capacity}")
    if args.latency < 0:
        raise ValueError(f"--latency: must not be negative, got {args.latency:g}")
    faults = build_faults(latency=args.latency, drop_on_call=args.drop_on_call, drop_on=args.drop_on,
                          error_on=args.error_on, rate_limit_on=args.rate_limit_on,
                          empty_sources_once=args.empty_sources_once, auth_required=args.auth_required)
    return FakeOptions(capacity=args.capacity, faults=faults, state=args.state)
