"""How `nlmsync serve`'s tools take arguments and give answers: argument errors in one line naming the field,
unknown arguments refused, and each answer one compact JSON text.

The SDK validates a tool's arguments with pydantic and reports a failure as the whole multi-line
`ValidationError` (with a documentation URL), and it drops arguments it does not know — so a
misspelt `chunks` would silently return the whole note. `StrictToolServer` turns the first into
`limit: Input should be a valid integer (got 'many')` and the second into a tool error listing the
arguments the tool takes.

An LLM client pays for every byte of `tools/list` and of each answer: a tool publishes no output schema (its
description says what it answers), and its answer is the result model as one compact JSON text, fields
that are None left out — not the SDK's indented text beside a structured copy of the same data.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ValidationError

__all__ = ["StrictToolServer", "compact_json", "describe_validation_error"]

F = TypeVar("F", bound=Callable[..., Any])
SHOWN_INPUT_CHARS = 60


def describe_validation_error(error: ValidationError) -> str:
    """`field: message (got value)` for each field in error, `; `-joined, on one line.

    A field typed as a union (`"0:05:00"` or `300`) fails once per member; the most telling problem is kept
    (a broken constraint over "not a string" / "not a number").
    """
    chosen: dict[str, Any] = {}
    for problem in error.errors():
        loc = problem["loc"]
        # later string parts of a location name union members ("constrained-str"), not fields
        field = ".".join(str(part) for i, part in enumerate(loc) if i == 0 or isinstance(part, int)) or "arguments"
        mismatch = problem["type"].endswith(("_type", "_parsing"))
        if field not in chosen or (not mismatch and chosen[field]["type"].endswith(("_type", "_parsing"))):
            chosen[field] = problem
    parts: list[str] = []
    for field, problem in chosen.items():
        message = f"{field}: {problem['msg']}"
        if problem["type"] != "missing":
            shown = repr(problem.get("input"))
            if len(shown) > SHOWN_INPUT_CHARS:
                shown = shown[:SHOWN_INPUT_CHARS] + "…"
            message += f" (got {shown})"
        parts.append(message)
    return "; ".join(parts).replace("\n", " ")


class StrictToolServer(MCPServer):
    """An `MCPServer` whose tools, registered with `strict_tool`, get one-line argument errors and refuse
    arguments they do not take."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._accepted: dict[str, tuple[str, ...]] = {}

    def strict_tool(self, description: str, annotations: ToolAnnotations) -> Callable[[F], F]:
        """Like `tool(description=…, annotations=…)`, recording the argument names the function takes; the model
        the function returns is answered as compact JSON text, without an output schema."""
        def register(fn: F) -> F:
            self._accepted[fn.__name__] = tuple(name for name, param in inspect.signature(fn).parameters.items()
                                                if param.annotation not in (Context, "Context"))
            self.tool(description=description, annotations=annotations, structured_output=False)(_answering_json(fn))
            return fn

        return register

    async def call_tool(self, name: str, arguments: dict[str, Any],
                        context: Context[Any, Any] | None = None) -> Any:
        accepted = self._accepted.get(name)
        if accepted is not None:
            unknown = sorted(set(arguments) - set(accepted))
            if unknown:
                raise ToolError(f"Error executing tool {name}: {', '.join(unknown)}: unknown argument "
                                f"({name} takes {', '.join(accepted)})")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(f"Error executing tool {name}: {describe_validation_error(cause)}") from cause
            raise


def compact_json(result: BaseModel) -> str:
    """A tool's answer as the client receives it: one line of JSON, None fields left out."""
    return result.model_dump_json(exclude_none=True)


def _answering_json(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` answering its model as `compact_json` (same signature, so the SDK reads the same arguments)."""
    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def answer_async(*args: Any, **kwargs: Any) -> str:
            return compact_json(await fn(*args, **kwargs))

        return answer_async

    @functools.wraps(fn)
    def answer(*args: Any, **kwargs: Any) -> str:
        return compact_json(fn(*args, **kwargs))

    return answer
