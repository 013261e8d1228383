"""The command line unattended, against the bundled fake: a network that is down is exit 4 with a hint for every
command, the allowance shows in `server-info` and stops `ask` with exit 8 (`nlmsync.cli.main` in-process)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("NLMSYNC_RETRY_ATTEMPTS", "1")  # a read is not tried again: no backoff to wait through


COMMANDS = {
    "server-info": ["server-info"],
    "notebooks": ["notebooks"],
    "refresh": ["--notebook", "new:Offline", "refresh", "algorithms/sorting/heapsort.md"],
    "ask": ["--notebook", "new:Offline", "ask", "How does heapsort work?"],
    "status": ["--notebook", "new:Offline", "status"],
    "reconcile": ["--notebook", "new:Offline", "reconcile"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_network_that_is_down_is_exit_4_with_a_hint_for_every_command(vault: Path, capsys, command: list[str]):
    code, _, err = run(capsys, "--vault", str(vault), "--server", "fake --network-down", *command)
    lines = err.splitlines()
    assert code == 4, err
    assert "the NotebookLM server could not reach Google ([Errno -2] Name or service not known)" in lines[0]
    assert lines[1].startswith("nlmsync: hint: ") and "network" in lines[1] and len(lines) == 2


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_with_json_a_network_that_is_down_still_prints_one_document(vault: Path, capsys, command: list[str]):
    """A script reading stdout gets one JSON document whatever happened: refresh's report of what was done and
    server-info's check carry the error; a command stopped before it had anything to report prints the error's
    document (the line on stderr, the exit code, the hint)."""
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake --network-down", *command, "--json")
    assert code == 4 and "could not reach Google" in err
    (line,) = out.splitlines()
    document = json.loads(line)
    assert document["schema_version"] == 1
    if command == ["server-info"]:
        assert document["version"] and document["auth_status"] == "unverified" and document["logged_in"] is None
        assert "could not reach Google" in document["error"]
    elif "refresh" in command:
        assert document["notes"] == [] and document["packs"] == []
    else:
        assert set(document) == {"schema_version", "error", "exit_code", "hint"}
        assert document["exit_code"] == 4 and "could not reach Google" in document["error"]
        assert err.splitlines() == [f"nlmsync: error: {document['error']}", f"nlmsync: hint: {document['hint']}"]


def test_with_json_a_refused_command_prints_the_errors_document_and_without_json_none(vault: Path, capsys):
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Q", "ask", " ",
                         "--json")
    assert code == 2 and json.loads(out)["error"] == "the question is empty" and json.loads(out)["exit_code"] == 2
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Q", "ask", " ")
    assert code == 2 and out == "" and err.startswith("nlmsync: error: the question is empty")
    # after `--` the words are arguments: a question that reads --json is asked (it matches no note), not taken
    # for the flag
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Q", "ask", "--",
                         "--json")
    assert code == 2 and out == "" and "no note of the vault matches the question" in err


def test_server_info_shows_the_plan_and_both_windows_of_the_allowance(vault: Path, capsys):
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake --tier pro --usage-used rolling=40",
                       "server-info")
    lines = out.splitlines()
    assert code == 0
    assert "plan:        Pro (NOTEBOOKLM_TIER_PRO_CONSUMER_USER): 300 sources per notebook" in lines
    (allowance,) = [line for line in lines if line.startswith("allowance:")]
    assert allowance.startswith("allowance:   rolling 60% left, resets ") and "; weekly 100% left, resets " in allowance
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake --tier pro --usage-used rolling=40",
                       "server-info", "--json")
    report = json.loads(out)
    assert report["plan"] == "Pro" and report["allowance"]["tier"] == "NOTEBOOKLM_TIER_PRO_CONSUMER_USER"
    rolling = report["allowance"]["windows"][0]
    assert (rolling["window"], rolling["percent_used"], rolling["percent_remaining"]) == ("rolling", 40.0, 60.0)
    assert rolling["resets_at"].endswith("Z")


@pytest.mark.parametrize(("tier", "plan"), [
    ("none", "Standard (no subscription tier): 50 sources per notebook"),
    ("NOTEBOOKLM_TIER_ODD", "NOTEBOOKLM_TIER_ODD (a tier nlmsync does not know: 50 sources per notebook unless "
                            "'capacity' is set)"),
])
def test_server_info_names_a_plan_without_a_tier_and_a_tier_it_does_not_know(vault: Path, capsys, tier: str,
                                                                             plan: str):
    code, out, _ = run(capsys, "--vault", str(vault), "--server", f"fake --tier {tier}", "server-info")
    assert code == 0 and f"plan:        {plan}" in out.splitlines()


def test_a_server_without_usage_get_shows_no_allowance_and_holds_nothing_back(vault: Path, capsys):
    server = "fake --without-tool usage_get"
    code, out, _ = run(capsys, "--vault", str(vault), "--server", server, "server-info")
    assert code == 0 and "allowance:   not reported by this server" in out.splitlines()
    code, out, err = run(capsys, "--vault", str(vault), "--server", server, "--notebook", "new:Old", "ask",
                         "How does heapsort work?", "--json")
    assert code == 0, err
    assert json.loads(out)["answer"]


def test_ask_with_the_allowance_used_up_is_exit_8_and_says_when_it_comes_back(vault: Path, capsys):
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake --usage-used rolling=100",
                         "--notebook", "new:Spent", "ask", "How does heapsort work?")
    lines = err.splitlines()
    assert (code, out) == (8, "")
    assert lines[0].startswith("nlmsync: error: the plan's usage allowance is used up (the rolling window has "
                               "nothing left): the question was not sent; the allowance comes back at ")
    assert lines[1].startswith("nlmsync: hint: ") and len(lines) == 2


def test_status_says_where_the_capacity_came_from(vault: Path, capsys):
    common = ["--vault", str(vault), "--server", "fake --tier ultra --capacity 600", "--notebook", "new:Plan"]
    code, _, err = run(capsys, *common, "refresh", "algorithms/sorting/heapsort.md")
    assert code == 0, err
    code, out, _ = run(capsys, *common, "status")
    assert code == 0 and "1/600 sources" in out.splitlines()[0]
    assert out.splitlines()[1] == "  capacity 600: what the notebook's plan allows (Ultra)"
    assert out.splitlines()[2].startswith("  allowance: rolling 100% left, resets ")
    code, out, _ = run(capsys, *common, "refresh", "--capacity", "60", "--json")
    assert json.loads(out)["capacity"] == 60
