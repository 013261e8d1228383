"""`nlmsync ask … --save [FILE]`: the answer kept in the vault as a note — the question as its title, the
answer, its citations as Obsidian links to real notes and headings, front matter with the notebook, the
conversation and the date — and kept out of the notebook unless `sync_saved_answers` says otherwise."""

from __future__ import annotations

import json
import os
import re
import unicodedata
from pathlib import Path

import pytest
import regex
import yaml
from tests.cli_helpers import run_cli as run

from nlmsync.app.answer_notes import NAME_BYTES

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


def test_words_after_a_double_dash_are_the_question_even_when_one_is_save() -> None:
    from nlmsync.cli._context import with_optional_values

    assert with_optional_values(["ask", "--save", "--", "--save"]) == ["ask", "--save=", "--", "--save"]
    words = ["ask", "--", "--save", "answers/a.md"]
    assert with_optional_values(words) == words


@pytest.mark.parametrize("question", ["ヒープソートはどう動きますか" * 12, "heapsort 👩‍👩‍👧‍👦🔥 " * 30,
                                      "heapsort " + "e\u0301\u0302" * 100, "heapsort " + "👍🏽" * 100])
def test_a_long_question_gives_a_name_within_255_bytes_cut_between_characters(
        vault: Path, capsys: pytest.CaptureFixture[str], question: str) -> None:
    # characters as a reader sees them (an emoji with its modifiers, e with its accents), in a vault path's NFC
    characters = regex.findall(r"\X", unicodedata.normalize("NFC", question))
    for tail in (".md", " 2.md"):  # the second answer's name fits too
        code, out, err = _ask(capsys, vault, question, "--save", "--json")
        assert code == 0, err
        saved = json.loads(out)["saved_path"]
        folder, name = saved.split("/")
        assert folder == "answers" and name.endswith(tail) and len(name.encode("utf-8")) <= NAME_BYTES
        stem = name.removesuffix(tail)
        kept = next(i for i in range(len(characters) + 1) if "".join(characters[:i]) == stem)
        following = next(i for i in range(kept, len(characters)) if characters[i] not in " .")
        assert len(("".join(characters[:following + 1]) + tail).encode("utf-8")) > NAME_BYTES  # cut as late as fits
        assert (vault / saved).is_file()


def test_a_long_file_is_cut_to_255_bytes_keeping_its_suffix(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _ask(capsys, vault, QUESTION, "--save", "answers/" + "長" * 300 + ".md", "--json")
    assert code == 0, err
    saved = json.loads(out)["saved_path"]
    assert saved == "answers/" + "長" * 84 + ".md" and (vault / saved).is_file()  # 84 × 3 + 3 bytes


@pytest.mark.parametrize(("file", "saved"), [
    ("a" * 300 + ".md", "a" * 252 + ".md"),
    ("b" * 300 + "/answer.md", "b" * 255 + "/answer.md"),
], ids=["note", "folder"])
def test_a_name_longer_than_the_system_takes_is_cut_in_the_vault(
        vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        file: str, saved: str) -> None:
    here = tmp_path / "elsewhere"
    here.mkdir()
    monkeypatch.chdir(here)  # FILE is looked for from the current folder first, then in the vault
    code, out, err = _ask(capsys, vault, QUESTION, "--save", file, "--json")
    assert code == 0, err
    assert json.loads(out)["saved_path"] == saved and (vault / saved).is_file()
    assert list(here.iterdir()) == []


def test_an_absolute_file_is_saved_inside_the_vault_or_refused(vault: Path, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "elsewhere" / "path.md"
    code, out, err = _ask(capsys, vault, QUESTION, "--save", str(outside))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert str(outside) in err and "absolute" in err
    assert not outside.exists() and not list(vault.rglob("path.md"))
    inside = vault / "answers" / "kept.md"
    code, out, err = _ask(capsys, vault, QUESTION, "--save", str(inside))
    assert code == 0 and "Saved to answers/kept.md" in out, err
    assert inside.is_file()


@pytest.mark.parametrize(("words", "saved"), [
    (["Why is \u202eheapsort dangerous?"], "answers/Why is heapsort dangerous.md"),
    (["Heap\u2066sort\u2069 and \u200fmerge\u2028sort?"], "answers/Heap sort and merge sort.md"),
    ([QUESTION, "--save", "answers/he\u202eap\x1b[31m.md"], "answers/heap[31m.md"),
])
def test_control_and_bidirectional_characters_are_left_out_of_names(
        vault: Path, capsys: pytest.CaptureFixture[str], words: list[str], saved: str) -> None:
    args = [*words, "--json"] if len(words) > 1 else [*words, "--save", "--json"]
    code, out, err = _ask(capsys, vault, *args)
    assert code == 0, err
    assert json.loads(out)["saved_path"] == saved and (vault / saved).is_file()
