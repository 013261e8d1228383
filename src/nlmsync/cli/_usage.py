"""Click's usage errors said as every other error of nlmsync: `nlmsync: error: …` on one line, then the command's
usage line as the hint, exit 2.

Click prints its own three-line form (the usage, a help pointer, `Error: …`) and words a range as `x>=1`;
`usage_error` gives the message and the hint `cli.main` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import click

__all__ = ["usage_error"]


def usage_error(exc: click.UsageError) -> tuple[str, str | None]:
    """The one-line message of a click usage error, and the hint that follows it (the command's usage)."""
    import click

    hint = None
    if exc.ctx is not None:
        usage = exc.ctx.get_usage().removeprefix("Usage: ")
        hint = f"usage: {' '.join(usage.split())} ('{exc.ctx.command_path} -h' for help)"
    if isinstance(exc, click.NoSuchCommand):
        return f"no such command '{exc.command_name}'{_did_you_mean(exc.possibilities)}", hint
    if isinstance(exc, click.NoSuchOption):
        return f"no such option '{exc.option_name}'{_did_you_mean(exc.possibilities)}", hint
    if isinstance(exc, click.MissingParameter):
        return f"missing {_name(exc.param)}" if exc.param is not None else _plain(exc.format_message()), hint
    if isinstance(exc, click.BadParameter):
        said = _range_words(exc.param, exc.message) if exc.param is not None else exc.message
        return (f"{_name(exc.param)}: {_plain(said)}" if exc.param is not None else _plain(said)), hint
    return _plain(exc.format_message()), hint


def _did_you_mean(possibilities: list[str] | None) -> str:
    if not possibilities:
        return ""
    return f" (did you mean {' or '.join(repr(p) for p in possibilities)}?)"


def _name(param: click.Parameter) -> str:
    """How an error names a parameter: an option by its longest flag, an argument by its metavar."""
    import click

    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def _plain(message: str) -> str:
    """Click's sentence as a clause: no capital to start, no full stop to end, one line."""
    line = " ".join(message.split())
    line = line[:1].lower() + line[1:] if line[:2] != line[:2].upper() else line
    return line.removesuffix(".")


def _range_words(param: click.Parameter, message: str) -> str:
    """A number outside a range's bounds said in words (`must be at least 1, got 0`), and a value that is not a
    number said as what is wanted; any other message as click words it."""
    import click

    kind = param.type
    if not isinstance(kind, click.IntRange | click.FloatRange):
        return message
    wanted = "a whole number" if isinstance(kind, click.IntRange) else "a number"
    if " is not a valid " in message:
        return f"{wanted} is wanted, got {message.split(' is not a valid ')[0]}"
    if " is not in the range " not in message:
        return message
    got = message.split(" is not in the range ")[0]
    low = _bound(kind.min, kind.min_open, "more than", "at least")
    high = _bound(kind.max, kind.max_open, "less than", "at most")
    if kind.min is not None and kind.max is not None and not (kind.min_open or kind.max_open):
        return f"must be between {kind.min} and {kind.max}, got {got}"
    return f"must be {' and '.join(b for b in (low, high) if b)}, got {got}"


def _bound(value: float | None, open_: bool, strict: str, inclusive: str) -> str:
    return "" if value is None else f"{strict if open_ else inclusive} {value}"
