"""The hypothesis profiles: chosen by HYPOTHESIS_PROFILE or CI, and `ci` runs every count in full."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings
from tests.hypothesis_profiles import PROFILE_VARIABLE, chosen_profile, examples


@pytest.mark.parametrize(("environ", "profile"), [
    ({}, "dev"),
    ({"CI": "true"}, "ci"),
    ({"CI": "1"}, "ci"),
    ({"CI": "false"}, "dev"),
    ({PROFILE_VARIABLE: "ci"}, "ci"),
    ({"CI": "true", PROFILE_VARIABLE: "dev"}, "dev"),
    ({PROFILE_VARIABLE: ""}, "dev"),
])
def test_the_profile_is_chosen_by_the_variable_then_by_ci(environ: dict[str, str], profile: str) -> None:
    assert chosen_profile(environ) == profile


def test_an_unknown_profile_is_named_in_the_error() -> None:
    with pytest.raises(ValueError, match=f"{PROFILE_VARIABLE}='thorough': unknown hypothesis profile"):
        chosen_profile({PROFILE_VARIABLE: "thorough"})


@pytest.fixture
def restore_profile() -> Iterator[None]:
    loaded = settings.default
    yield
    settings.load_profile(next(name for name in ("dev", "ci") if settings.get_profile(name) == loaded))


def test_ci_runs_every_named_count_in_full_and_dev_a_tenth(restore_profile: None) -> None:
    settings.load_profile("ci")
    assert settings.default.max_examples == 100
    assert [examples(n) for n in (600, 40, 1)] == [600, 40, 1]
    settings.load_profile("dev")
    assert settings.default.max_examples == 10
    assert [examples(n) for n in (600, 40, 1)] == [60, 4, 1]
    assert settings.get_profile("dev").deadline is None and settings.get_profile("ci").deadline is None


def test_the_profile_variable_is_not_read_as_a_setting(tmp_path) -> None:
    """The suite's own variable must not look like an nlmsync setting: every NLMSYNC_* name is one, and an
    unknown one stops each command with exit 2."""
    from nlmsync.config import ENV_PREFIX, load_settings
    from nlmsync.errors import ConfigError

    assert load_settings(vault=tmp_path, env={PROFILE_VARIABLE: "dev"}) == load_settings(vault=tmp_path, env={})
    with pytest.raises(ConfigError, match=PROFILE_VARIABLE):
        load_settings(vault=tmp_path, env={ENV_PREFIX + PROFILE_VARIABLE: "dev"})
