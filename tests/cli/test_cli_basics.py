"""What users of gh, rclone or restic expect of a command line: --version, -h, examples in every command's
help, global options after the command, shell completion, no spec section numbers in help text."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run

from nlmsync.cli import _command_name, app
from nlmsync.cli._app import COMMAND_MODULES, GLOBAL_VALUE_OPTIONS

COMMANDS = sorted(app.commands)


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--version")
    assert (code, out, err) == (0, f"nlmsync {version('nlmsync')}\n", "")


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_short_and_long_help(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    code, out, _ = run(capsys, flag)
    assert code == 0 and out.startswith("Usage: nlmsync [OPTIONS] COMMAND")
    code, out, _ = run(capsys, "search", flag)
    assert code == 0 and out.startswith("Usage: nlmsync search")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_examples_and_no_section_numbers(capsys: pytest.CaptureFixture[str],
                                                                 command: str) -> None:
    code, out, _ = run(capsys, command, "-h")
    assert code == 0
    examples = out.split("Examples:", 1)[1].strip().splitlines()
    assert examples and all(line.strip().startswith(("nlmsync ", 'eval "$(nlmsync', "mkdir -p ")) for line in examples)
    assert "§" not in out


def test_root_help_has_no_section_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    assert "§" not in run(capsys, "-h")[1]


def test_global_options_after_the_command(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # given twice, the one after the command wins; --state after the command is honoured too
    state = tmp_path / "elsewhere.db"
    code, out, _ = run(capsys, "--vault", str(tmp_path / "missing"), "index", "--vault", str(vault),
                       "--state", str(state), "--json")
    assert code == 0 and json.loads(out)["indexed_count"] == 26
    assert state.exists() and not (vault / ".nlmsync" / "state.db").exists()
    code, out, err = run(capsys, "search", "heapsort", "--vault", str(vault), "--json", "--limit", "1")
    assert (code, err) == (0, "")
    assert json.loads(out)["results"][0]["path"] == "algorithms/sorting/heapsort.md"


def test_fake_server_keeps_its_own_state_option() -> None:
    params = app.commands["fake-server"].params
    state = [p for p in params if "--state" in p.opts]
    assert len(state) == 1 and "JSON file" in (state[0].help or "")  # no global twin shadows it
    assert any("--vault" in p.opts for p in app.commands["search"].params)


def _candidates(out: str) -> list[str]:
    return [line.split(",", 1)[1] for line in out.splitlines()]  # bash's answer lines: TYPE,VALUE


def test_completion_script_and_candidates(capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, "completion", "bash")
    assert code == 0 and "_NLMSYNC_COMPLETE=bash_complete" in out and "complete " in out
    monkeypatch.setenv("_NLMSYNC_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "nlmsync se")
    monkeypatch.setenv("COMP_CWORD", "1")
    code, out, _ = run(capsys)
    assert code == 0 and _candidates(out) == ["search", "serve", "server-info"]
    monkeypatch.setenv("COMP_WORDS", "nlmsync completion ")
    monkeypatch.setenv("COMP_CWORD", "2")
    code, out, _ = run(capsys)
    assert code == 0 and _candidates(out) == ["bash", "zsh", "fish", "powershell"]
    monkeypatch.setenv("COMP_WORDS", "nlmsync serve --transport ")
    monkeypatch.setenv("COMP_CWORD", "3")
    code, out, _ = run(capsys)
    assert code == 0 and _candidates(out) == ["stdio", "http"]
    for words, cword in (("nlmsync --server ", "2"), ("nlmsync refresh --server f", "3")):
        monkeypatch.setenv("COMP_WORDS", words)
        monkeypatch.setenv("COMP_CWORD", cword)
        code, out, _ = run(capsys)
        assert code == 0 and _candidates(out) == ["fake", "fake-stdio"], words


def test_powershell_completion_script_and_candidates(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(capsys, "completion", "powershell")
    assert code == 0 and "Register-ArgumentCompleter -Native -CommandName nlmsync" in out
    assert '$env:_NLMSYNC_COMPLETE = "powershell_complete"' in out
    # what the script hands nlmsync: the line up to the cursor, and the word being completed
    monkeypatch.setenv("_NLMSYNC_COMPLETE", "powershell_complete")
    monkeypatch.setenv("COMP_WORDS", "nlmsync --vault notes se")
    monkeypatch.setenv("COMP_CWORD", "se")
    code, out, _ = run(capsys)
    assert code == 0 and [line.split("\t")[1] for line in out.splitlines()] == ["search", "serve", "server-info"]
    assert out.splitlines()[0].startswith("plain\tsearch\tRank the vault's notes")  # TYPE, VALUE, HELP
    monkeypatch.setenv("COMP_WORDS", "nlmsync serve --transport h")  # a choice begun
    monkeypatch.setenv("COMP_CWORD", "h")
    code, out, _ = run(capsys)
    assert (code, out) == (0, "plain\thttp\t\n")  # a choice has no help: the script shows its value instead
    # an empty word: PowerShell removes an environment variable it is told to set to "", so COMP_CWORD is unset
    monkeypatch.setenv("COMP_WORDS", "nlmsync serve --transport ")
    monkeypatch.delenv("COMP_CWORD")
    code, out, _ = run(capsys)
    assert (code, out) == (0, "plain\tstdio\t\nplain\thttp\t\n")


def test_an_unknown_shell_is_one_line_naming_the_shells(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "completion", "tcsh")
    assert (code, out) == (2, "")
    assert err.splitlines() == ["nlmsync: error: SHELL: expected bash, zsh, fish or powershell, got 'tcsh'"]


def test_help_lists_the_everyday_commands_first_and_the_tools_last(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "-h")[1]
    listed = [line.split()[0] for line in out.split("Commands:\n", 1)[1].split("\n\n", 1)[0].splitlines()]
    assert listed[:4] == ["index", "search", "refresh", "ask"]
    assert listed[-3:] == ["server-info", "fake-server", "completion"]


def test_query_has_no_short_flag_and_q_means_quiet(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "refresh", "-h")[1]
    assert "-q, --quiet" in out and "--query TEXT" in out and "-q, --query" not in out


@pytest.mark.parametrize("limit", ["0", "x"])
def test_a_bad_limit_is_refused_with_a_usage_error(vault: Path, capsys: pytest.CaptureFixture[str], limit: str) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "search", "heapsort", "--limit", limit, "--json")
    assert code == 2 and "--limit" in err
    # no results: the usage error's document, the line said on stderr
    document = json.loads(out)
    assert document["exit_code"] == 2 and "results" not in document and f"nlmsync: error: {document['error']}" in err


def test_each_command_is_registered_by_the_module_main_imports_for_it() -> None:
    # main() imports only the module COMMAND_MODULES names for the command it runs: a command missing from the
    # map, or registered by another module, would be unknown to nlmsync run as a program
    registered = {name: command.callback.__module__ for name, command in app.commands.items()
                  if command.callback is not None}
    assert registered == {name: f"nlmsync.cli.{module}" for name, module in COMMAND_MODULES.items()}


def test_help_lists_the_commands_in_one_order_whatever_was_imported_first() -> None:
    code = ("import nlmsync.cli.watch_cmds, nlmsync.cli.search_cmds\nfrom nlmsync.cli import main\n"
            "main(['-h'])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          check=False)
    commands = done.stdout.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    listed = [line.split()[0] for line in commands.splitlines()]
    assert listed == list(COMMAND_MODULES), done.stderr


def test_the_words_that_take_a_value_are_the_global_options_that_do() -> None:
    # the name of the command main() registers is the first word that is neither these nor their values
    root = app
    taking_values = {opt for param in root.params if not getattr(param, "is_flag", False)
                     for opt in param.opts}
    assert taking_values == GLOBAL_VALUE_OPTIONS


@pytest.mark.parametrize(("argv", "command"), [
    (["search", "tar"], "search"),
    (["--vault", "search", "-q", "index", "--json"], "index"),
    (["--vault=notes", "--state", "s.db", "status"], "status"),
    (["--quiet", "--help"], None),
    (["--vault"], None),
])
def test_the_command_main_registers_is_the_one_argv_runs(argv: list[str], command: str | None) -> None:
    assert _command_name(argv) == command


DEVELOPER_WORDS = ("registry", "mapping", "canonicaliz", "carry-over", "BM25", "llm logs", "branch", "selection rule",
                   "to say the source of")


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_is_in_the_users_words(capsys: pytest.CaptureFixture[str], command: str) -> None:
    out = run(capsys, command, "-h")[1].split("Examples:", 1)[0]
    used = [word for word in DEVELOPER_WORDS if word.lower() in out.lower()]
    assert not used, f"{command} -h says {used}"


@pytest.mark.parametrize("command", ["fake-server", "completion"])
def test_commands_the_global_options_do_nothing_for_do_not_list_them(capsys: pytest.CaptureFixture[str],
                                                                      command: str) -> None:
    out = run(capsys, command, "-h")[1].split("Examples:", 1)[0]
    for option in ("--vault", "--config", "--server", "--notebook", "--quiet"):
        assert option not in out, f"{command} -h lists {option}"
    assert "--state FILE" in out or command == "completion"  # the fake server's own --state stays


def test_the_server_option_says_its_default(capsys: pytest.CaptureFixture[str]) -> None:
    out = " ".join(run(capsys, "-h")[1].split())
    assert "Default: 'notebooklm-mcp --transport stdio'" in out


def test_bare_nlmsync_prints_the_help_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert (code, err) == (0, "") and out.startswith("Usage: nlmsync [OPTIONS] COMMAND")
    assert "refresh" in out and "fake-server" in out
    done = subprocess.run([sys.executable, "-m", "nlmsync"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, "") and done.stdout.startswith("Usage: nlmsync")


def test_fake_servers_transport_lists_its_choices_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "fake-server", "--help")
    assert code == 0 and "--transport [stdio|http]" in out and "TEXT" not in out.split("--transport", 1)[1][:40]


def test_two_failures_at_once_exit_with_the_code_of_nlmsyncs_own_error(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from nlmsync.cli import sync_cmds
    from nlmsync.errors import ConnectionLostError

    def two_tasks_failed(*args: object, **kwargs: object) -> None:
        # concurrent tasks fail together: a task group raises them as one group, the unexplained one first
        raise ExceptionGroup("unhandled errors in a TaskGroup", [
            RuntimeError("a worker's own bug"),
            ExceptionGroup("nested", [ConnectionLostError("source_add: the connection to the server was lost")])])

    monkeypatch.setattr(sync_cmds, "run_app", two_tasks_failed)
    code, out, err = run(capsys, "--vault", str(vault), "--notebook", "nb-1", "refresh", "--all")
    assert (code, out) == (4, "")
    assert err.splitlines()[0] == "nlmsync: error: source_add: the connection to the server was lost"


@pytest.mark.parametrize(("stop", "said"), [(KeyboardInterrupt, "interrupted"), (EOFError, "aborted")])
def test_a_command_stopped_by_ctrl_c_or_the_end_of_input_exits_130(
        vault: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        stop: type[BaseException], said: str) -> None:
    def stopped(*args: object, **kwargs: object) -> None:
        raise stop

    monkeypatch.setattr("nlmsync.cli.searching.open_index", stopped)
    code, out, err = run(capsys, "--vault", str(vault), "search", "heapsort")
    assert (code, out) == (130, "")
    assert err.strip().splitlines() == [f"nlmsync: error: {said}"]


def test_the_click_application_run_without_main_keeps_the_global_options(vault: Path) -> None:
    """`nlmsync.cli.app` run as click runs any group (click's test runner, a program that embeds it): the
    global options before the command still reach it."""
    from click.testing import CliRunner

    result = CliRunner().invoke(app, ["--vault", str(vault), "search", "heapsort", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"][0]["path"] == "algorithms/sorting/heapsort.md"
