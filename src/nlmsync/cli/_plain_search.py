"""A search given in its plain forms, recognized without typer: `main()` runs it straight away.

Importing typer and building the `search` command costs a fresh process about 50 ms of CPU — a fifth of a
whole search of a 38,404-note vault answered cold (issue 16 holds `nlmsync search --json` to bm25s's load and
answer). Scripts call the plain forms:

    nlmsync [GLOBAL…] search [GLOBAL…] QUERY [--json] [--limit N]

where GLOBAL is `--vault DIR`, `--config FILE`, `--state FILE`, `--server SPEC`, `--notebook ID` (each a
separate word from its value) or `-q`/`--quiet`, in any order around QUERY and the command's own options.
Those `plain_search` recognizes and hands to `cli.searching.run_search` with the context typer would have
made; anything else — `--queries`, `--help`, `--version`, `--opt=value`, `--`, a value starting with `-`, a
word given twice, a `--limit` that is not a positive whole number, a second QUERY — is left to typer, which
parses it (and says what is wrong with it) as always. `tests/cli/test_plain_search.py` runs every form both
ways and compares what they print and their exit codes.
"""

from __future__ import annotations

from dataclasses import dataclass

from nlmsync.cli._context import GLOBAL_VALUE_OPTIONS, CliContext

__all__ = ["PlainSearch", "plain_search"]

_QUIET = frozenset({"-q", "--quiet"})


@dataclass
class PlainSearch:
    """A search recognized by `plain_search`: its context (as the global options set it) and its arguments."""

    cli: CliContext
    query: str
    limit: int = 10
    json_output: bool = False

    def run(self) -> None:
        from nlmsync.cli.searching import run_search

        run_search(self.cli, self.query, self.limit, None, self.json_output)


def plain_search(args: list[str]) -> PlainSearch | None:
    """The search `args` (the words after `nlmsync`) ask for when they are a plain form, else None."""
    cli = CliContext()
    # as typer's root callback leaves them when these options are not given
    cli.global_overrides.update(state=None, server=None, notebook=None)
    command = query = limit = None
    json_output = False
    seen: set[str] = set()
    words = iter(args)
    for word in words:
        if word in seen:
            return None
        if word in GLOBAL_VALUE_OPTIONS:
            value = next(words, None)
            if value is None or value.startswith("-"):
                return None
            seen.add(word)
            cli.set_global(word[2:], value)
        elif word in _QUIET:
            if seen & _QUIET:
                return None
            seen.add(word)
            cli.set_global("quiet", True)
        elif command is None:
            if word != "search":
                return None
            command = word
        elif word == "--json":
            seen.add(word)
            json_output = True
        elif word == "--limit":
            value = next(words, None)
            if value is None or not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            seen.add(word)
            limit = int(value)
        elif word.startswith("-") or query is not None:
            return None
        else:
            query = word
    if command is None or query is None:
        return None
    return PlainSearch(cli, query, 10 if limit is None else limit, json_output)
