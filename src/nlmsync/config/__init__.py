"""Settings: one pydantic model (`config.model`), filled from config file, then `NLMSYNC_*` environment, then flags.

Precedence is defaults < `<vault>/.nlmsync/config.toml` (or `--config FILE`) < environment < flags.
Every key is flat (``top_n = 10`` in TOML, ``NLMSYNC_TOP_N=10`` in the environment). An unknown key
or an invalid value is a `ConfigError` naming the key and where it came from (exit 2): among them a number
that is not finite (`1e400`, `inf`, `nan`) and, in the config file, a string where a list is wanted
(`exclude = "x"`; the environment's comma-separated form is a list on purpose).

A search that nothing configures (no config file, no `NLMSYNC_*` variable, no flag but the vault and the state
file) runs on `SearchSettings`, the defaults as a plain dataclass: importing pydantic and building the model is
~0.15 s of CPU, a third of a fresh `nlmsync search` on a vault of 40,000 notes. `Settings` is imported from
`config.model` on first use.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_origin

from nlmsync.config.defaults import PASSAGE_B as PASSAGE_B
from nlmsync.config.defaults import PASSAGE_K1 as PASSAGE_K1
from nlmsync.config.defaults import SNIPPET_K1 as SNIPPET_K1
from nlmsync.config.defaults import IndexSettings as IndexSettings
from nlmsync.errors import ConfigError
from nlmsync.vault import STATE_DIR_NAME, STATE_FILE_NAME, check_vault, read_input_file

if TYPE_CHECKING:
    from nlmsync.config.model import Settings as Settings

ENV_PREFIX = "NLMSYNC_"
CONFIG_FILE_NAME = "config.toml"
CONFIG_FILE_LIMIT = 1 << 20
"""Bytes a config file may hold: a config is a few lines; what is larger (`/dev/zero`) is no config."""


def __getattr__(name: str) -> Any:
    if name == "Settings":  # the pydantic model: imported by whoever uses it, not by a plain search
        from nlmsync.config.model import Settings

        globals()["Settings"] = Settings
        return Settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class SearchSettings(IndexSettings):
    """What a search command reads of the settings: the index's, and the vault, the state file and the
    snippets' length, at `Settings`' defaults; the settings of a search that nothing configures
    (`search_settings`)."""

    vault: Path = Path(".")
    state: Path | None = None
    snippet_length: int = 300

    @property
    def state_path(self) -> Path:
        return self.state if self.state is not None else self.vault / STATE_DIR_NAME / STATE_FILE_NAME


def default_config_path(vault: Path) -> Path:
    return vault / STATE_DIR_NAME / CONFIG_FILE_NAME


def _read_config_file(path: Path, *, required: bool) -> dict[str, Any]:
    import tomllib  # with a config file only: a search that nothing configures reads none

    try:
        raw = read_input_file(path, CONFIG_FILE_LIMIT)
    except FileNotFoundError:
        if required:
            raise ConfigError(f"{path}: config file not found", source=str(path)) from None
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file ({exc.strerror})", source=str(path)) from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: config file is not valid UTF-8", source=str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML ({exc})", source=str(path)) from None
    except RecursionError:  # the parser recurses once per level of `[[[…]]]` or `{a={a=…}}`
        raise ConfigError(f"{path}: invalid TOML (values nested too deeply)", source=str(path)) from None
    for key, value in data.items():
        if isinstance(value, dict):
            raise ConfigError(f"{path}: unknown section [{key}] (all keys are top-level)", key=key,
                              source=str(path))
    return data


_WORDS_FOR_LISTS = {"attachments": ("none", "all")}
"""The words a list setting takes in a config file in place of a list."""


def _list_keys() -> frozenset[str]:
    from nlmsync.config.model import Settings

    return frozenset(name for name, field in Settings.model_fields.items() if get_origin(field.annotation) is list)


def _check_lists(path: Path, data: dict[str, Any]) -> None:
    """A config file's string where a list is wanted is a mistake (`exclude = "x"` reads as one pattern by
    chance, `"a, b"` as a pattern with a comma in it): refused.

    Raises:
        ConfigError: naming the key.
    """
    for key in _list_keys().intersection(data):
        if isinstance(data[key], str) and data[key].strip().lower() not in _WORDS_FOR_LISTS.get(key, ()):
            raise ConfigError(f"{path}: invalid value for '{key}': a list is wanted ({key} = [{json.dumps(data[key])}]), "
                              "not a string", key=key, source=str(path))


def _env_value(raw: str) -> Any:
    """Environment values are strings; JSON lists/numbers/booleans are accepted too."""
    stripped = raw.strip()
    if stripped.startswith("[") or stripped in ("true", "false", "null"):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError:
            return raw
    return raw


def _read_env(env: Mapping[str, str]) -> dict[str, Any]:
    from nlmsync.config.model import Settings

    known = set(Settings.model_fields) | {"config"}
    values: dict[str, Any] = {}
    for name, raw in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        key = name[len(ENV_PREFIX):].lower()
        if key not in known:
            raise ConfigError(f"environment variable {name}: unknown setting '{key}'", key=key, source=name)
        try:
            values[key] = _env_value(raw)
        except RecursionError:  # the JSON parser recurses once per level of `[[[…]]]`
            raise ConfigError(f"environment variable {name}: invalid value for '{key}': lists nested too deeply",
                              key=key, source=name) from None
    return values


def _validate_layer(base: dict[str, Any], layer: dict[str, Any], source: str,
                    key_source: dict[str, str]) -> dict[str, Any]:
    from nlmsync.config.model import Settings

    known = set(Settings.model_fields)
    for key in layer:
        if key not in known:
            raise ConfigError(f"{source}: unknown setting '{key}'", key=key, source=source)
    merged = {**base, **layer}
    for key in layer:
        key_source[key] = source
    return merged


# What each kind of value is called in a config error (pydantic's error type prefix → the user's words).
_WANTED = {"int": "a whole number", "float": "a number", "bool": "true or false", "string": "text",
           "list": "a list", "path": "a path"}
# The bounds of a setting: pydantic's error type, its context key, and the words for it.
_BOUNDS = {"greater_than_equal": ("ge", "at least"), "greater_than": ("gt", "more than"),
           "less_than_equal": ("le", "at most"), "less_than": ("lt", "less than")}


def _problem_words(problem: Mapping[str, Any]) -> str:
    """A pydantic validation problem of one setting in the user's words: what is wanted, and what was given
    (`a whole number is wanted, got '1e400'`)."""
    kind = str(problem.get("type", ""))
    context = problem.get("ctx") or {}
    got = problem.get("input")
    shown = f", got {got!r}" if isinstance(got, str | int | float) and not isinstance(got, bool) else ""
    if kind == "value_error":
        return str(context.get("error", problem.get("msg", "invalid value")))
    if kind in _BOUNDS:
        bound, words = _BOUNDS[kind]
        limit = context.get(bound)
        limit = int(limit) if isinstance(limit, float) and limit.is_integer() else limit
        return f"must be {words} {limit}{shown}"
    if kind == "finite_number":
        return f"a finite number is wanted{shown}"
    if kind == "int_from_float":
        return f"a whole number is wanted{shown}"
    if kind == "literal_error":
        return f"one of {context.get('expected')} is wanted{shown}"
    wanted = _WANTED.get(kind.split("_")[0])
    if wanted is not None and kind.endswith(("_parsing", "_type")):
        return f"{wanted} is wanted{shown}"
    return str(problem.get("msg", "invalid value"))


def load_settings(*, vault: Path | None = None, config_file: Path | None = None,
                  env: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Build the settings for one run.

    `vault` and `config_file` come from flags (the environment may give NLMSYNC_VAULT too); `overrides`
    holds every other flag the user actually passed (None values are ignored).

    Raises:
        ConfigError: an unknown key or invalid value, naming the key and its source.
        InputError: the vault is not a folder (`vault.check_vault`: every command says so first, in its words).
    """
    from pydantic import ValidationError

    from nlmsync.config.model import Settings

    env = os.environ if env is None else env
    env_values = _read_env(env)
    flag_values = {k: v for k, v in (overrides or {}).items() if v is not None}
    if vault is not None:
        flag_values["vault"] = vault
    vault_path = Path(flag_values.get("vault") or env_values.get("vault") or ".")
    check_vault(vault_path)
    explicit_config = config_file or (Path(env[ENV_PREFIX + "CONFIG"]) if ENV_PREFIX + "CONFIG" in env else None)
    env_values.pop("config", None)
    path = explicit_config or default_config_path(vault_path)
    file_values = _read_config_file(path, required=explicit_config is not None)
    _check_lists(path, file_values)

    key_source: dict[str, str] = {}
    merged = _validate_layer({}, file_values, str(path), key_source)
    merged = _validate_layer(merged, env_values, "environment", key_source)
    merged = _validate_layer(merged, flag_values, "command line", key_source)
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = first.get("loc") or ()
        key = str(loc[0]) if loc else "?"
        source = key_source.get(key, "settings")
        shown = ENV_PREFIX + key.upper() if source == "environment" else key
        raise ConfigError(f"{source}: invalid value for '{shown}': {_problem_words(first)}", key=key,
                          source=source) from None


def search_settings(*, vault: Path | None = None, config_file: Path | None = None,
                    env: Mapping[str, str] | None = None,
                    overrides: Mapping[str, Any] | None = None) -> SearchSettings | Settings:
    """The settings of a search, as `load_settings` takes them: `SearchSettings` when nothing but the vault
    and the state file is given (no config file, no `NLMSYNC_*` variable, no other flag), else the settings
    `load_settings` makes (and checks).

    Raises:
        ConfigError, InputError: as `load_settings`.
    """
    env = os.environ if env is None else env
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    state = flags.pop("state", None)
    vault_path = Path(vault) if vault is not None else Path(".")
    if (config_file is None and not flags and not any(name.startswith(ENV_PREFIX) for name in env)
            and (state is None or isinstance(state, Path))
            and not os.path.lexists(default_config_path(vault_path))):
        check_vault(vault_path)
        return SearchSettings(vault=vault_path, state=state)
    return load_settings(vault=vault, config_file=config_file, env=env, overrides=overrides)
