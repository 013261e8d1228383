"""Settings: reference defaults, precedence file < environment < flags, unknown/invalid keys rejected by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nlmsync.cli import main
from nlmsync.config import Settings, load_settings
from nlmsync.errors import ConfigError


def write_config(vault: Path, text: str) -> Path:
    path = vault / ".nlmsync" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_reference_plugin_defaults() -> None:
    s = Settings()
    # k1 1.0, not the plugin's 1.2: the better of the two on the known-item sets ("How notes are ranked")
    assert (s.top_n, s.cutoff_ratio, s.min_k, s.k1, s.b) == (15, 0.4, 3, 1.0, 0.75)
    assert (s.weight_body, s.weight_heading, s.weight_path) == (1.0, 2.5, 4.0)
    assert s.full_rescan_every == 50


def test_precedence_file_then_environment_then_flags(tmp_path: Path) -> None:
    write_config(tmp_path, "top_n = 7\nmin_k = 2\nk1 = 1.5\n")
    env = {"NLMSYNC_MIN_K": "4", "NLMSYNC_K1": "1.8", "HOME": "/x"}
    s = load_settings(vault=tmp_path, env=env, overrides={"k1": 2.0, "b": None})
    assert (s.top_n, s.min_k, s.k1, s.b) == (7, 4, 2.0, 0.75)
    assert s.vault == tmp_path
    assert s.state_path == tmp_path / ".nlmsync" / "state.db"


def test_explicit_config_file_and_env_lists(tmp_path: Path) -> None:
    config = tmp_path / "other.toml"
    config.write_text('exclude = ["private/**"]\n')
    assert load_settings(vault=tmp_path, config_file=config, env={}).exclude == ["private/**"]
    assert load_settings(vault=tmp_path, env={"NLMSYNC_EXCLUDE": "a/**, b"}).exclude == ["a/**", "b"]
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings(vault=tmp_path, config_file=tmp_path / "missing.toml", env={})


@pytest.mark.parametrize(("text", "env", "key", "where"), [
    ("top_nn = 3\n", {}, "top_nn", "config.toml"),
    ("", {"NLMSYNC_TOPN": "3"}, "topn", "NLMSYNC_TOPN"),
    ("cutoff_ratio = 1.5\n", {}, "cutoff_ratio", "config.toml"),
    ("", {"NLMSYNC_K1": "fast"}, "NLMSYNC_K1", "environment"),
    ("[search]\ntop_n = 3\n", {}, "search", "config.toml"),
])
def test_unknown_or_invalid_keys_name_the_key(tmp_path: Path, text: str, env: dict[str, str], key: str,
                                              where: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(vault=tmp_path, env=env)
    assert key in str(caught.value) and where in str(caught.value)
    assert caught.value.exit_code == 2


@pytest.mark.parametrize(("text", "env", "message"), [
    ('exclude = "private/**"\n', {}, "invalid value for 'exclude': a list is wanted (exclude = [\"private/**\"])"),
    ("query_timeout = 1e400\n", {}, "invalid value for 'query_timeout': a finite number is wanted, got inf"),
    ("k1 = nan\n", {}, "invalid value for 'k1'"),
    ("weight_path = inf\n", {}, "invalid value for 'weight_path'"),
    ("", {"NLMSYNC_CALL_TIMEOUT": "inf"}, "invalid value for 'NLMSYNC_CALL_TIMEOUT'"),
    ("", {"NLMSYNC_ADD_RATE_PER_MINUTE": "Infinity"}, "invalid value for 'NLMSYNC_ADD_RATE_PER_MINUTE'"),
    ('exclude = ["private/**", "!"]\n', {}, "config.toml: invalid value for 'exclude': Invalid git"),
    ("", {"NLMSYNC_EXCLUDE": "drafts,!"}, "environment: invalid value for 'NLMSYNC_EXCLUDE'"),
])
def test_a_bare_string_for_a_list_or_a_number_that_is_not_finite_is_refused(
        tmp_path: Path, text: str, env: dict[str, str], message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(vault=tmp_path, env=env)
    assert message in str(caught.value) and caught.value.exit_code == 2


@pytest.mark.parametrize(("text", "env", "message"), [
    ("", {"NLMSYNC_CAPACITY": "1e400"},
     "environment: invalid value for 'NLMSYNC_CAPACITY': a whole number is wanted, got '1e400'"),
    ("capacity = 2.5\n", {}, "invalid value for 'capacity': a whole number is wanted, got 2.5"),
    ("capacity = 0\n", {}, "invalid value for 'capacity': must be at least 1, got 0"),
    ("cutoff_ratio = 1.5\n", {}, "invalid value for 'cutoff_ratio': must be at most 1, got 1.5"),
    ("query_timeout = 0\n", {}, "invalid value for 'query_timeout': must be more than 0, got 0"),
    ('pack = "sometimes"\n', {}, "'pack': one of 'auto', 'always' or 'never' is wanted, got 'sometimes'"),
    ("", {"NLMSYNC_QUERY_STOP_WORDS": "maybe"},
     "invalid value for 'NLMSYNC_QUERY_STOP_WORDS': true or false is wanted, got 'maybe'"),
    ("server = 5\n", {}, "invalid value for 'server': text is wanted, got 5"),
    ('exclude = [1]\n', {}, "invalid value for 'exclude': text is wanted, got 1"),
])
def test_a_bad_value_is_said_in_the_users_words(tmp_path: Path, text: str, env: dict[str, str],
                                                message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(vault=tmp_path, env=env)
    said = str(caught.value)
    assert message in said and caught.value.exit_code == 2
    assert "Input should" not in said and "unable to parse" not in said


def test_every_float_setting_refuses_infinity() -> None:
    floats = [name for name, field in Settings.model_fields.items() if "float" in str(field.annotation)]
    assert "query_timeout" in floats
    for name in floats:
        with pytest.raises(ValueError, match="finite"):
            Settings(**{name: float("inf")})


def test_broken_toml_names_the_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, "top_n = = 3")
    with pytest.raises(ConfigError, match="invalid TOML") as caught:
        load_settings(vault=tmp_path, env={})
    assert str(path) in str(caught.value)


@pytest.mark.parametrize("text", [
    "exclude = " + "[" * 50_000 + "]" * 50_000,
    "top_n = " + "{a = " * 50_000 + "1" + "}" * 50_000,
], ids=["lists", "inline tables"])
def test_a_config_nested_too_deeply_exits_2_naming_the_file(vault: Path, text: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(vault, text + "\n")
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(vault), "search", "heap"])
    out, err = capsys.readouterr()
    assert (exited.value.code, out) == (2, "")
    assert err == f"nlmsync: error: {path}: invalid TOML (values nested too deeply)\n"


def test_an_environment_list_nested_too_deeply_is_refused_naming_the_variable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(vault=tmp_path, env={"NLMSYNC_EXCLUDE": "[" * 50_000 + "]" * 50_000})
    assert str(caught.value) == "environment variable NLMSYNC_EXCLUDE: invalid value for 'exclude': lists nested too deeply"


def test_cli_exits_2_with_the_key_named(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(vault, "top_n = 3\nbogus_key = 1\n")
    with pytest.raises(SystemExit) as exited:
        main(["--vault", str(vault), "search", "heap"])
    out, err = capsys.readouterr()
    assert exited.value.code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "bogus_key" in err and "Traceback" not in err


def test_search_settings_defaults_are_the_settings_defaults() -> None:
    import dataclasses

    from nlmsync.config import SearchSettings

    for item in dataclasses.fields(SearchSettings):
        assert item.name in Settings.model_fields
        ours = item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
        assert ours == Settings.model_fields[item.name].get_default(call_default_factory=True), item.name
    assert SearchSettings(vault=Path("v")).state_path == Settings(vault=Path("v")).state_path


def test_a_search_that_nothing_configures_gets_the_plain_defaults(tmp_path: Path) -> None:
    from nlmsync.config import SearchSettings, search_settings

    state = tmp_path / "elsewhere.db"
    plain = search_settings(vault=tmp_path, env={"HOME": "/x"}, overrides={"state": state, "server": None})
    assert isinstance(plain, SearchSettings)
    assert (plain.vault, plain.state_path) == (tmp_path, state)


@pytest.mark.parametrize(("config", "env", "overrides"), [
    ("top_n = 7\n", {}, {}),  # the config file
    ("", {"NLMSYNC_TOP_N": "7"}, {}),  # the environment
    ("", {}, {"notebook": "abc"}),  # a flag
], ids=["file", "environment", "flag"])
def test_a_search_that_something_configures_gets_checked_settings(tmp_path: Path, config: str, env: dict[str, str],
                                                                  overrides: dict[str, str]) -> None:
    from nlmsync.config import search_settings

    if config:
        write_config(tmp_path, config)
    settings = search_settings(vault=tmp_path, env=env, overrides=overrides)
    assert isinstance(settings, Settings)
    assert settings.top_n == (7 if config or env else 15)


@pytest.mark.parametrize(("config", "env", "message"), [
    ("top_n = 0\n", {}, "invalid value for 'top_n'"),
    ("", {"NLMSYNC_NO_SUCH": "1"}, "unknown setting 'no_such'"),
], ids=["file", "environment"])
def test_search_still_rejects_bad_settings(vault: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch, config: str, env: dict[str, str],
                                           message: str) -> None:
    from tests.cli_helpers import run_cli

    if config:
        write_config(vault, config)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = run_cli(capsys, "--vault", str(vault), "search", "heapsort", "--json")
    assert code == 2 and message in err
    assert message in json.loads(out)["error"] and "results" not in json.loads(out)  # no search was made


@pytest.mark.parametrize(("text", "env", "message"), [
    ("capacity = true\n", {}, "config.toml: invalid value for 'capacity': a number is wanted, not a boolean"),
    ("top_n = false\n", {}, "config.toml: invalid value for 'top_n': a number is wanted, not a boolean"),
    ("k1 = true\n", {}, "config.toml: invalid value for 'k1': a number is wanted, not a boolean"),
    ("chunk_max_tokens = 40\nchunk_overlap_tokens = 40\n", {},
     "config.toml: invalid value for 'chunk_overlap_tokens': must be smaller than chunk_max_tokens (40)"),
    ("", {"NLMSYNC_CHUNK_OVERLAP_TOKENS": "500"},
     "environment: invalid value for 'NLMSYNC_CHUNK_OVERLAP_TOKENS': must be smaller than chunk_max_tokens (400)"),
    ('serve_token = "   "\n', {}, "config.toml: invalid value for 'serve_token': a bearer token needs at least 16 characters"),
    ('serve_token = "x"\n', {}, "config.toml: invalid value for 'serve_token': a bearer token needs at least 16 characters"),
    ("", {"NLMSYNC_SERVE_TOKEN": "has spaces in the middle"}, "invalid value for 'NLMSYNC_SERVE_TOKEN'"),
])
def test_a_value_that_means_something_else_is_refused_naming_its_key(tmp_path: Path, text: str,
                                                                     env: dict[str, str], message: str) -> None:
    write_config(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_settings(vault=tmp_path, env=env)
    assert message in str(caught.value) and caught.value.exit_code == 2


def test_booleans_and_a_good_token_are_still_taken() -> None:
    settings = Settings(query_stop_words=False, wait_for_processing=True, serve_token="0123456789abcdef0123")
    assert settings.serve_token == "0123456789abcdef0123" and settings.capacity == 50
