"""The plan behind a login as `usage_get` reports it: the tier's sources per notebook and the windows of the
usage allowance (shapes as the real server's `services/usage.py` answers them)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from nlmsync.notebooklm import Plan, Usage, plan_for_tier
from nlmsync.notebooklm.models import parse_result

# The example `nlm usage --json` answer of the real package's command reference.
REAL_EXAMPLE = {
    "status": "success",
    "windows": [
        {"window": "rolling", "percent_used": 0.0, "percent_remaining": 100, "resets_at": "2026-09-12T22:44:21+00:00"},
        {"window": "weekly", "percent_used": 8.7, "percent_remaining": 91.3, "resets_at": "2026-09-19T17:44:21+00:00"},
    ],
    "tier": "NOTEBOOKLM_TIER_PRO_CONSUMER_USER",
}


@pytest.mark.parametrize(("tier", "plan"), [
    ("NOTEBOOKLM_TIER_PRO_CONSUMER_USER", Plan("Pro", 300)),
    ("NOTEBOOKLM_TIER_ULTRA_CONSUMER_USER", Plan("Ultra", 600)),
    ("NOTEBOOKLM_TIER_PLUS_CONSUMER_USER", Plan("Plus", 100)),
    ("NOTEBOOKLM_TIER_STANDARD_CONSUMER_USER", Plan("Standard", 50)),
    (None, Plan("Standard", 50)),  # no entitlement: the plan without a subscription
    ("NOTEBOOKLM_TIER_ENTERPRISE_SEAT", Plan(None, None)),  # a tier nlmsync does not know
    ("NOTEBOOKLM_TIER_PROFESSIONAL", Plan(None, None)),  # a word that only starts like a plan's
])
def test_the_tier_names_the_plan_and_its_sources_per_notebook(tier: str | None, plan: Plan) -> None:
    assert plan_for_tier(tier) == plan


def test_the_real_answer_reads_with_both_windows_and_nothing_spent() -> None:
    usage = parse_result("usage_get", Usage, REAL_EXAMPLE)
    assert [w.window for w in usage.windows] == ["rolling", "weekly"]
    assert usage.windows[1].resets_at == datetime(2026, 9, 19, 17, 44, 21, tzinfo=UTC)
    assert usage.plan == Plan("Pro", 300) and usage.spent_window() is None


def _usage(*windows: dict[str, object]) -> Usage:
    return Usage.model_validate({"windows": list(windows), "tier": None})


def test_a_window_with_nothing_left_is_spent_and_an_unknown_figure_is_not() -> None:
    spent = _usage({"window": "rolling", "percent_used": 100.0, "percent_remaining": 0.0, "resets_at": None})
    unknown = _usage({"window": "rolling", "percent_used": None, "percent_remaining": None, "resets_at": None})
    by_used = _usage({"window": "weekly", "percent_used": 100.0, "percent_remaining": None, "resets_at": None})
    assert spent.spent_window() is not None and unknown.spent_window() is None
    assert by_used.spent_window() is not None


def test_of_two_spent_windows_the_one_that_comes_back_last_holds_questions_back() -> None:
    usage = _usage({"window": "rolling", "percent_remaining": 0, "resets_at": "2026-09-12T22:44:21+00:00"},
                   {"window": "weekly", "percent_remaining": 0, "resets_at": "2026-09-19T17:44:21+00:00"})
    window = usage.spent_window()
    assert window is not None and window.window == "weekly"
    no_time = _usage({"window": "rolling", "percent_remaining": 0, "resets_at": "2026-09-12T22:44:21+00:00"},
                     {"window": "weekly", "percent_remaining": 0, "resets_at": None})
    said = no_time.spent_window()
    assert said is not None and said.resets_at is None  # when it comes back is not known: not a sooner time
