"""The plan behind a login: the sources per notebook the subscription tier `usage_get` reports allows.

The tier is a string such as `NOTEBOOKLM_TIER_PRO_CONSUMER_USER`, or null for an account with no paid plan. The
real server (`notebooklm-mcp-cli` 0.15.8) names no other tier; the plans are told apart by the word in it, as
the published source limits are: 50 sources (no paid plan, Standard), 100 (Plus), 300 (Pro), 600 (Ultra).
`usage_get`'s answer itself is `models.Usage`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PLAN_CAPACITIES", "Plan", "plan_for_tier"]

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
