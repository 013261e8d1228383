"""The plan and its usage allowance as `server-info` and `status` print them: each window's share left and its
reset time in local time, the plan's name and sources per notebook."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nlmsync.notebooklm import Usage, UsageWindow


def _window(window: UsageWindow) -> str:
    from nlmsync.app import local_time

    if window.percent_remaining is not None:
        left = f"{window.percent_remaining:g}% left"
    elif window.percent_used is not None:
        left = f"{100 - window.percent_used:g}% left"
    else:
        left = "share left not reported"
    resets = f", resets {local_time(window.resets_at)}" if window.resets_at is not None else ""
    return f"{window.window} {left}{resets}" + (" (used up)" if window.spent else "")


def allowance_line(usage: Usage | None) -> str:
    """Both windows of the allowance in one line (rolling first), or what it is when the server does not say."""
    if usage is None:
        return "not reported by this server"
    return "; ".join(_window(w) for w in usage.windows) or "no window reported"


def plan_line(usage: Usage) -> str:
    """The plan's name and sources per notebook, with the tier the server reported."""
    plan = usage.plan
    if plan.name is None:
        return f"{usage.tier} (a tier nlmsync does not know: 50 sources per notebook unless 'capacity' is set)"
    tier = usage.tier or "no subscription tier"
    return f"{plan.name} ({tier}): {plan.capacity} sources per notebook"
