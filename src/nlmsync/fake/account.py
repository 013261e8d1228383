"""The fake's Google account: its login (`server_info`'s `auth_status`, `refresh_auth`) and its plan
(`usage_get`), answered with the real server's result shapes and words (`notebooklm-mcp-cli` 0.15.8:
`mcp/tools/auth.py`, `mcp/tools/usage.py`, `services/usage.py`, `core/base.py`).

What the account does is set by the fault switches (`Faults`): a login that expires after N calls
(`expire_login_after`), a renewal that fails (`renewal_fails`), a login made elsewhere that `refresh_auth`'s Nth
call finds and that then lasts (`login_back_after`), the percent used of each allowance window (`usage_used`) and the tier (`tier`).
The calls made on the current login are counted in the fake's counters (`faults.LOGIN_COUNTER`), so they
survive a restart with the fake's state file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from nlmsync.fake.faults import LOGIN_COUNTER, MADE_ELSEWHERE, USAGE_WINDOWS, Faults
from nlmsync.fake.replies import error

__all__ = ["EXPIRED_ERROR", "NETWORK_ERROR", "allowance_spent", "auth_status", "login_expired", "refresh_auth",
           "usage_get"]

# What the real server's Google-backed tools answer once the login has expired and it could not recover it.
EXPIRED_ERROR = ("Authentication expired. Run 'nlm login' in your terminal to re-authenticate. MCP users: the "
                 "server should auto-detect the new credentials; if not, call the refresh_auth tool.")
# What the real server's tools answer when its requests to Google cannot resolve the host (no network).
NETWORK_ERROR = "[Errno -2] Name or service not known"
NO_TOKENS = "No cached tokens found. Run 'nlm login' to authenticate."
NOT_RENEWED = ("Cached auth is no longer valid and the saved browser profile could not refresh it automatically. "
               "Run `nlm login` in a terminal to re-authenticate.")
RELOADED = "Auth tokens reloaded from disk cache and validated."
RENEWED = "Auth tokens refreshed via headless Chrome."
# When each window resets, from the moment usage_get is asked: the rolling window is about five hours long.
RESETS_AFTER = {"rolling": 5 * 3600, "weekly": 7 * 24 * 3600}


def login_expired(faults: Faults, counters: dict[str, int]) -> bool:
    """The login has been used for as many calls as it lasts (a login made elsewhere lasts)."""
    return (faults.expire_login_after is not None and not counters.get(MADE_ELSEWHERE)
            and counters.get(LOGIN_COUNTER, 0) >= faults.expire_login_after)


def auth_status(faults: Faults, counters: dict[str, int]) -> str:
    """`server_info`'s `auth_status`: not_configured without a login, unverified when Google cannot be reached,
    stale once the login expired, else configured."""
    if faults.network_down:
        return "unverified"
    if faults.auth_required:
        return "not_configured"
    return "stale" if login_expired(faults, counters) else "configured"


def refresh_auth(faults: Faults, counters: dict[str, int]) -> dict[str, Any]:
    """Reload the login (still valid, or made elsewhere) or renew an expired one, unless renewal fails."""
    if faults.auth_required:
        return error(NO_TOKENS)
    expired = login_expired(faults, counters)
    made_elsewhere = faults.login_back_after is not None and counters.get("refresh_auth", 0) >= faults.login_back_after
    if expired and faults.renewal_fails and not made_elsewhere:
        return error(NOT_RENEWED, status="expired", reason="expired",
                     details="Google redirected the saved login to its sign-in page")
    counters[LOGIN_COUNTER] = 0
    if expired and made_elsewhere:
        counters[MADE_ELSEWHERE] = 1
    return {"status": "success", "message": RENEWED if expired and not made_elsewhere else RELOADED}


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(int(epoch), UTC).isoformat()


def allowance_spent(faults: Faults) -> bool:
    """Whether a window of the allowance is used up: NotebookLM then refuses questions (RESOURCE_EXHAUSTED)."""
    return any(float(faults.usage_used.get(window, 0.0)) >= 100.0 for window in USAGE_WINDOWS)


def usage_get(faults: Faults, now: float) -> dict[str, Any]:
    """Both allowance windows, rolling first (percent used, percent left, reset time in UTC), and the tier."""
    windows = []
    for window in USAGE_WINDOWS:
        used = float(faults.usage_used.get(window, 0.0))
        windows.append({"window": window, "percent_used": used, "percent_remaining": 100.0 - used,
                        "resets_at": _iso(now + RESETS_AFTER[window])})
    return {"status": "success", "windows": windows, "tier": faults.tier}
