"""The fake's Google account: a login that expires after N calls, `refresh_auth` renewing it (or not, or finding
a login made elsewhere), `usage_get`'s windows and tier in the real server's shapes, and the switches' forms."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from nlmsync.fake import FakeNotebookLM, Faults
from nlmsync.fake.account import EXPIRED_ERROR, NO_TOKENS, NOT_RENEWED, RELOADED, RENEWED
from nlmsync.fake.faults import build_faults, parse_fake_options

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _fake(faults: Faults, state_path: Path | None = None) -> FakeNotebookLM:
    return FakeNotebookLM(faults=faults, state_path=state_path, clock=NOW.timestamp)


def test_the_login_expires_after_n_calls_and_a_renewal_starts_a_new_one() -> None:
    fake = _fake(Faults(expire_login_after=2))
    assert [fake.apply("notebook_list", {})["status"] for _ in range(3)] == ["success", "success", "error"]
    assert fake.apply("notebook_list", {})["error"] == EXPIRED_ERROR
    assert fake.apply("server_info", {})["auth_status"] == "stale"  # server_info uses no login: never refused
    assert fake.apply("refresh_auth", {"profile": None}) == {"status": "success", "message": RENEWED}
    assert fake.apply("server_info", {})["auth_status"] == "configured"
    assert [fake.apply("notebook_list", {})["status"] for _ in range(3)] == ["success", "success", "error"]


def test_a_renewal_that_fails_answers_as_the_real_server_does_until_a_login_made_elsewhere_comes_back() -> None:
    fake = _fake(Faults(expire_login_after=0, renewal_fails=True, login_back_after=3))
    failed = fake.apply("refresh_auth", {"profile": None})
    assert failed["status"] == "expired" and failed["error"] == NOT_RENEWED and "reason" in failed
    assert fake.apply("refresh_auth", {"profile": None})["status"] == "expired"
    assert fake.apply("refresh_auth", {"profile": None}) == {"status": "success", "message": RELOADED}
    assert all(fake.apply("notebook_list", {})["status"] == "success" for _ in range(5))  # that login lasts


def test_a_server_without_any_login_has_no_tokens_to_reload() -> None:
    fake = _fake(Faults(auth_required=True))
    assert fake.apply("refresh_auth", {"profile": None}) == {"status": "error", "error": NO_TOKENS}


def test_usage_get_answers_the_real_shape_with_the_percent_used_and_the_tier() -> None:
    fake = _fake(build_faults(usage_used=["rolling=100", "weekly=12.5"], tier="plus"))
    usage = fake.apply("usage_get", {"profile": None})
    assert usage == {"status": "success", "tier": "NOTEBOOKLM_TIER_PLUS_CONSUMER_USER", "windows": [
        {"window": "rolling", "percent_used": 100.0, "percent_remaining": 0.0,
         "resets_at": "2026-11-20T17:00:00+00:00"},
        {"window": "weekly", "percent_used": 12.5, "percent_remaining": 87.5,
         "resets_at": "2026-11-27T12:00:00+00:00"}]}
    assert fake.apply("usage_get", {"profile": None}) == usage  # reading it uses nothing up
    assert _fake(Faults()).apply("usage_get", {"profile": None})["tier"] is None


def test_a_network_that_is_down_fails_every_google_call_and_leaves_server_info() -> None:
    fake = _fake(build_faults(network_down=True))
    assert fake.apply("notebook_list", {})["error"] == "[Errno -2] Name or service not known"
    assert fake.apply("server_info", {})["auth_status"] == "unverified"


def test_the_login_keeps_its_count_across_restarts_with_a_state_file(tmp_path: Path) -> None:
    state = tmp_path / "fake.json"
    first = _fake(Faults(expire_login_after=2), state)
    first.apply("notebook_list", {})
    first.save()
    again = _fake(Faults(expire_login_after=2), state)
    assert [again.apply("notebook_list", {})["status"] for _ in range(2)] == ["success", "error"]


def test_the_switches_in_their_command_line_forms() -> None:
    options = parse_fake_options(["--expire-login-after", "0", "--renewal-fails", "--login-back-after", "2",
                                  "--usage-used", "weekly=100", "--tier", "NOTEBOOKLM_TIER_X", "--without-tool",
                                  "usage_get", "--network-down"])
    assert options.faults == Faults(expire_login_after=0, renewal_fails=True, login_back_after=2,
                                    usage_used={"weekly": 100.0}, tier="NOTEBOOKLM_TIER_X",
                                    without_tools=frozenset({"usage_get"}), network_down=True)
    assert parse_fake_options(["--tier", "none"]).faults.tier is None


@pytest.mark.parametrize(("words", "fragment"), [
    (["--usage-used", "daily=10"], "--usage-used: expected rolling=PERCENT"),
    (["--usage-used", "rolling=120"], "--usage-used: a percentage from 0 to 100"),
    (["--usage-used", "rolling=lots"], "--usage-used: 'lots' is not a number"),
    (["--tier", "gold"], "--tier: expected one of none, standard, plus, pro, ultra"),
    (["--without-tool", "notebook_get"], "--without-tool: expected refresh_auth or usage_get"),
    (["--expire-login-after", "-1"], "--expire-login-after: must not be negative"),
    (["--login-back-after", "0"], "--login-back-after: call numbers start at 1"),
])
def test_a_bad_switch_says_which_in_one_line(words: list[str], fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(")):
        parse_fake_options(words)
