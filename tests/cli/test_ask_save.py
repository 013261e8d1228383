"""`nlmsync ask … --save [FILE]`: the answer kept in the vault as a note — the question as its title, the
answer, its citations as Obsidian links to real notes and headings, front matter with the notebook, the
conversation and the date — and kept out of the notebook unless `sync_saved_answers` says otherwise."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml
from tests.cli_helpers import run_cli as run

QUESTION = "How does heapsort work?"
LINK = re.compile(r"\[\[([^\]#|]+)(?:#([^\]|]+))?\]\]")


@pytest.fixture(autouse=True)
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


def _headings(text: str) -> set[str]:
    return {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.MULTILINE)}


def _ask(capsys: pytest.CaptureFixture[str], vault: Path, *words: str) -> tuple[int, str, str]:
    return run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Saved", "ask", *words)


def test_a_saved_answer_is_a_note_whose_links_resolve_to_real_notes_and_headings(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _ask(capsys, vault, QUESTION, "--save", "--json")
    assert code == 0, err
    result = json.loads(out)
    saved = result["saved_path"]
    assert saved == "answers/How does heapsort work.md"
    text = (vault / saved).read_text(encoding="utf-8")
    front, body = text.removeprefix("---\n").split("\n---\n", 1)
    meta = yaml.safe_load(front)
    assert meta["question"] == QUESTION and meta["notebook"] == result["notebook_id"]
    assert meta["conversation"] == result["conversation_id"] and meta["nlmsync"] is False
    assert re.search(r"^date: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$", front, flags=re.MULTILINE)
    assert body.startswith(f"\n# {QUESTION}\n\n{result['answer'].strip()}\n")
    links = LINK.findall(body)
    assert ("algorithms/sorting/heapsort", "How does it work?") in links
    for target, heading in links:
        note = (vault / f"{target}.md").read_text(encoding="utf-8")
        assert not heading or heading in _headings(note), (target, heading)
    assert len(links) == len(result["citations"])


def test_a_file_is_named_from_the_vault_and_never_overwritten(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _ask(capsys, vault, QUESTION, "--save", "answers/heap.md")
    assert code == 0 and "Saved to answers/heap.md" in out
    assert (vault / "answers/heap.md").read_text(encoding="utf-8").count("# How does heapsort work?") == 1
    before = (vault / "answers/heap.md").read_bytes()
    code, out, err = _ask(capsys, vault, QUESTION, "--save", "answers/heap.md")
    assert (code, out) == (2, "") and err.startswith("nlmsync: error: answers/heap.md: already in the vault")
    assert (vault / "answers/heap.md").read_bytes() == before
    code, out, _ = _ask(capsys, vault, "--save", QUESTION)  # --save before the question: the default name
    code, again, _ = _ask(capsys, vault, "--save", QUESTION)
    assert code == 0 and "Saved to answers/How does heapsort work.md" in out
    assert "Saved to answers/How does heapsort work 2.md" in again
    code, _, err = _ask(capsys, vault, QUESTION, "--save", "../outside.md")
    assert code == 2 and "outside.md" in err and not (vault.parent / "outside.md").exists()


def test_saved_answers_stay_out_of_the_notebook_unless_the_setting_says(vault: Path,
                                                                          capsys: pytest.CaptureFixture[str],
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert _ask(capsys, vault, QUESTION, "--save")[0] == 0
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "refresh", "--all", "--json")
    outcome = {n["path"]: n for n in json.loads(out)["notes"]}
    assert code == 0 and outcome["answers/How does heapsort work.md"]["branch"] == "excluded"
    monkeypatch.setenv("NLMSYNC_SYNC_SAVED_ANSWERS", "true")
    assert _ask(capsys, vault, "What is quicksort?", "--save")[0] == 0
    code, out, _ = run(capsys, "--vault", str(vault), "--server", "fake", "refresh", "--all", "--json")
    outcome = {n["path"]: n for n in json.loads(out)["notes"]}
    assert code == 0 and outcome["answers/What is quicksort.md"]["branch"] == "added"
