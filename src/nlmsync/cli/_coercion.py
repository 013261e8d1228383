"""Parameter values that need no conversion are handed back without typer's pydantic coercion.

typer >= 0.29 converts every parameter's value through a pydantic `TypeAdapter`, built the first time the
parameter is processed, even for an option that was not given: a fresh `nlmsync search` then imports
pydantic's validators and builds about fifteen adapters, ~0.08 s of CPU for nothing. `install` gives each
parameter a coercion that returns at once what typer would return unchanged (an option not given, a string
for a `str`, a path string for a plain `Path`, an in-range `int` default) and hands every other value to
typer's own coercion, built then: the messages and checks stay typer's. With a typer that has no such
coercion (older ones run on click's types), `install` does nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from typer._coercion import build_runtime_param
    from typer._param_types import coerce_cli_path
    from typer.core import _TyperParameter
except ImportError:  # a typer without pydantic coercion
    _TyperParameter = None  # type: ignore[misc,assignment]


class _PlainValues:
    """The coercion of one parameter: the values needing no conversion here, the rest by typer's."""

    def __init__(self, param: Any) -> None:
        self._descriptor = param.type_descriptor
        self._typer_coercion: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if not (param.multiple or param.nargs != 1):
            info = self._descriptor.parameter_info
            annotation = self._descriptor.annotation
            if annotation is str and isinstance(value, str) and info.parser is None:
                return value
            if annotation is Path and isinstance(value, str) and info.parser is None and info.path_type is None:
                # typer's own check of the path (exists, readable, …) once it is a Path: no adapter needed
                return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
            if (annotation is int and type(value) is int and info.parser is None and not info.clamp
                    and (info.min is None or value >= info.min) and (info.max is None or value <= info.max)):
                return value
        if self._typer_coercion is None:
            self._typer_coercion = build_runtime_param(self._descriptor)
        return self._typer_coercion.coerce(value, param=param, ctx=ctx)


def _install_on(param: Any) -> Any:
    if isinstance(param, _TyperParameter) and getattr(param, "_runtime_param", False) is None:
        param._runtime_param = _PlainValues(param)  # type: ignore[assignment]
    return param


def install(command: Any) -> None:
    """Give `command`'s parameters, its help option (made when first asked for) and its subcommands' the
    coercion above, when typer has its own."""
    if _TyperParameter is None:
        return
    for param in command.params:
        _install_on(param)
    made_help_option = command.get_help_option
    command.get_help_option = lambda ctx: _install_on(made_help_option(ctx))
    for sub in getattr(command, "commands", {}).values():
        install(sub)
