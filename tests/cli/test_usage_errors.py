"""A mistyped command line is said as every other error: `nlmsync: error: …` on one line, the command's usage
as the hint, exit 2 — never click's three-line usage text."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from tests.cli_helpers import run_cli as run

from nlmsync.cli._usage import usage_error


@pytest.mark.parametrize(("args", "error", "usage"), [
    (["bogus"], "no such command 'bogus'", "usage: nlmsync [OPTIONS] COMMAND [ARGS]..."),
    (["serch", "heap"], "no such command 'serch' (did you mean 'search' or 'serve'?)",
     "usage: nlmsync [OPTIONS] COMMAND"),
    (["refresh", "--jsn"], "no such option '--jsn' (did you mean '--json'?)", "usage: nlmsync refresh"),
    (["ask"], "missing QUESTION", "usage: nlmsync ask [OPTIONS] QUESTION ('nlmsync ask -h' for help)"),
    (["search", "heap", "--limit", "0"], "--limit: must be at least 1, got 0", "usage: nlmsync search"),
    (["search", "heap", "--limit", "many"], "--limit: a whole number is wanted, got 'many'", "usage: nlmsync search"),
    (["search", "heap", "--limit", "two words"], "--limit: a whole number is wanted, got 'two words'",
     "usage: nlmsync search"),
    (["serve", "--port", "70000"], "--port: must be between 0 and 65535, got 70000", "usage: nlmsync serve"),
    (["serve", "--transport", "pigeon"], "--transport: 'pigeon' is not one of 'stdio', 'http'", "usage: nlmsync serve"),
    (["fake-server", "--transport", "pigeon"], "--transport: 'pigeon' is not one of 'stdio', 'http'",
     "usage: nlmsync fake-server"),
    (["refresh", "--zzzz"], "no such option '--zzzz'", "usage: nlmsync refresh [OPTIONS] [PATH]..."),
    (["ask", "--new", "--conversation", "c1", "q"],
     "--new, --continue and --conversation cannot be used together", "usage: nlmsync ask"),
    (["search", "heap", "sort"], "got unexpected extra argument (sort)", "usage: nlmsync search"),
])
def test_a_usage_error_is_one_error_line_and_the_usage(vault: Path, capsys: pytest.CaptureFixture[str],
                                                       args: list[str], error: str, usage: str) -> None:
    code, out, err = run(capsys, "--vault", str(vault), *args)
    lines = err.splitlines()
    assert (code, out) == (2, "")
    assert len(lines) == 2, err
    assert lines[0] == f"nlmsync: error: {error}", err  # the whole line: nothing said after it
    assert lines[1].startswith(f"nlmsync: hint: {usage}"), err


def test_an_option_without_its_value_is_one_error_line(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = run(capsys, "--vault", str(vault), "refresh", "--capacity")
    assert code == 2
    assert err.splitlines()[0] == "nlmsync: error: option '--capacity' requires an argument"
    assert "Usage:" not in err and "Error:" not in err


@pytest.mark.parametrize(("kind", "value", "said"), [
    (click.FloatRange(0, 1), "x", "--n: a number is wanted, got 'x'"),
    (click.FloatRange(0, 1, min_open=True), "0", "--n: must be more than 0 and at most 1, got 0.0"),
    (click.IntRange(max=9, max_open=True), "9", "--n: must be less than 9, got 9"),
    (click.IntRange(max=9), "10", "--n: must be at most 9, got 10"),
    (click.IntRange(min=1, min_open=True), "1", "--n: must be more than 1, got 1"),
])
def test_every_kind_of_range_is_said_in_words(kind: click.ParamType, value: str, said: str) -> None:
    """Any bound an option may have — open or closed, below or above, on a whole or a real number — is said as
    words, as the ranges of nlmsync's own options are."""
    command = click.Command("cmd", params=[click.Option(["--n"], type=kind)])
    with pytest.raises(click.UsageError) as caught:
        command.main(["--n", value], standalone_mode=False)
    assert usage_error(caught.value)[0] == said
