"""Fault switches: the CLI forms parse (or fail with one clear line) and each call meets the right fault."""

from __future__ import annotations

import pytest

from nlmsync.fake.faults import (
    DropRule,
    ErrorRule,
    Faults,
    RateLimitRule,
    parse_drop_on,
    parse_drop_on_call,
    parse_error_on,
    parse_rate_limit_on,
    plan_call,
)


def test_parse_forms() -> None:
    assert parse_drop_on_call("3") == DropRule(nth=3, tool=None, when="before")
    assert parse_drop_on_call("2:after") == DropRule(nth=2, tool=None, when="after")
    assert parse_drop_on("source_add:1:after") == DropRule(nth=1, tool="source_add", when="after")
    assert parse_drop_on("notebook_get:2") == DropRule(nth=2, tool="notebook_get", when="before")
    assert parse_error_on("notebook_query:2=boom: it broke") == ErrorRule("notebook_query", "boom: it broke", 2)
    assert parse_error_on("source_add=nope") == ErrorRule("source_add", "nope", None)
    assert parse_rate_limit_on("source_add") == RateLimitRule("source_add", None)
    assert parse_rate_limit_on("notebook_get:4") == RateLimitRule("notebook_get", 4)


@pytest.mark.parametrize(("parser", "spec", "fragment"), [
    (parse_drop_on_call, "x", "not a number"),
    (parse_drop_on_call, "0", "start at 1"),
    (parse_drop_on, "source_add", "TOOL:N"),
    (parse_drop_on, "source_add:1:later", "'before' or 'after'"),
    (parse_error_on, "source_add", "TOOL[:N]=MESSAGE"),
    (parse_rate_limit_on, ":3", "TOOL[:N]"),
])
def test_bad_forms_name_the_switch(parser, spec: str, fragment: str) -> None:
    with pytest.raises(ValueError, match="^--") as info:
        parser(spec)
    assert fragment in str(info.value)


def test_calls_are_counted_overall_and_per_tool() -> None:
    faults = Faults(drops=[DropRule(nth=3), DropRule(nth=2, tool="notebook_get", when="after")],
                    errors=[ErrorRule("source_add", "bad", 2)], rate_limits=[RateLimitRule("notebook_query")])
    counters: dict[str, int] = {}
    plans = [plan_call(faults, counters, tool) for tool in
             ["notebook_get", "source_add", "source_add", "notebook_get", "notebook_query", "notebook_query"]]
    assert [p.call_number for p in plans] == [1, 2, 3, 4, 5, 6]
    assert [p.drop for p in plans] == [None, None, "before", "after", None, None]
    assert [p.error for p in plans] == [None, None, "bad", None, None, None]
    assert [p.rate_limited for p in plans] == [False, False, False, False, True, True]
    assert counters == {"*": 6, "notebook_get": 2, "source_add": 2, "notebook_query": 2}


def test_auth_required_spares_server_info() -> None:
    faults = Faults(auth_required=True)
    assert not plan_call(faults, {}, "server_info").auth_required
    assert plan_call(faults, {}, "notebook_get").auth_required
