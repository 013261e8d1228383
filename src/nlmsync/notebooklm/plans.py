"""The plan behind a login, as `usage_get` reports it: the usage allowance's windows, the subscription tier, and
the sources per notebook that tier allows.

NotebookLM meters questions as compute against two windows at once, a short rolling one (about five hours)
and a weekly one; `usage_get` says how much of each is left and when it resets (ISO 8601, UTC). The tier is a
string such as `NOTEBOOKLM_TIER_PRO_CONSUMER_USER`, or null for an account with no paid plan. The real server
(`notebooklm-mcp-cli` 0.15.8) names no other tier; the plans are told apart by the word in it, as the published
source limits are: 50 sources (no paid plan, Standard), 100 (Plus), 300 (Pro), 600 (Ultra).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pydantic import Field

from nlmsync.notebooklm.models import _Result

__all__ = ["PLAN_CAPACITIES", "Plan", "Usage", "UsageWindow", "plan_for_tier"]

TIER_PREFIX = "NOTEBOOKLM_TIER_"
# The word of a tier that names the plan, and the plan's sources per notebook; checked in this order.
TIER_PLANS = (("ULTRA", "Ultra", 600), ("PRO", "Pro", 300), ("PLUS", "Plus", 100), ("STANDARD", "Standard", 50))
NO_TIER = ("Standard", 50)
PLAN_CAPACITIES = tuple(sorted(capacity for _, _, capacity in TIER_PLANS))
"""The sources a notebook may hold on each plan, smallest first."""


@dataclass(frozen=True)
class Plan:
    """A tier's plan: its name and sources per notebook, both None for a tier nlmsync does not know."""

    name: str | None
    capacity: int | None


def plan_for_tier(tier: str | None) -> Plan:
    """The plan a `usage_get` tier names: no tier is the plan without a subscription (Standard, 50 sources)."""
    if tier is None:
        return Plan(*NO_TIER)
    words = set(tier.upper().removeprefix(TIER_PREFIX).split("_"))
    for word, name, capacity in TIER_PLANS:
        if word in words:
            return Plan(name, capacity)
    return Plan(None, None)


class UsageWindow(_Result):
    """One window of the allowance. The server reports a figure it did not get as null: unknown, not zero."""

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
