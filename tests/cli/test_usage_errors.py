"""A mistyped command line is said as every other error: `nlmsync: error: …` on one line, the command's usage
as the hint, exit 2 — never click's three-line usage text."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


@pytest.mark.parametrize(("args", "error", "usage"), [
    (["bogus"], "no such command 'bogus'", "usage: nlmsync [OPTIONS] COMMAND [ARGS]..."),
    (["serch", "heap"], "no such command 'serch' (did you mean 'search' or 'serve'?)",
     "usage: nlmsync [OPTIONS] COMMAND"),
    (["refresh", "--jsn"], "no such option '--jsn' (did you mean '--json'?)", "usage: nlmsync refresh"),
    (["ask"], "missing QUESTION", "usage: nlmsync ask [OPTIONS] QUESTION ('nlmsync ask -h' for help)"),
    (["search", "heap", "--limit", "0"], "--limit: must be at least 1, got 0", "usage: nlmsync search"),
    (["search", "heap", "--limit", "many"], "--limit: a whole number is wanted, got 'many'", "usage: nlmsync search"),
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
