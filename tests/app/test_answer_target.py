"""Where `ask --save` puts an answer (`answer_target`): a name made from the question that is a plain, visible
note name, or the FILE given with its hidden characters left out, never over a note already there."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlmsync.app.answer_notes import answer_target
from nlmsync.errors import InputError


def test_a_question_of_only_punctuation_is_saved_as_answer(tmp_path: Path) -> None:
    assert answer_target(tmp_path, "???", "") == "answers/answer.md"
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "answer.md").write_text("kept", encoding="utf-8")
    assert answer_target(tmp_path, "...", "") == "answers/answer 2.md"


def test_a_question_starting_with_a_dot_is_not_saved_as_a_hidden_file(tmp_path: Path) -> None:
    assert answer_target(tmp_path, ".bashrc or .profile?", "") == "answers/bashrc or .profile.md"
    assert answer_target(tmp_path, ". . . and then", "") == "answers/and then.md"


def test_a_question_keeps_its_letters_at_either_end(tmp_path: Path) -> None:
    """Only dots and spaces are trimmed from the ends of the question: not letters of its first or last word."""
    assert answer_target(tmp_path, "XOR swap of X", "") == "answers/XOR swap of X.md"


def test_hidden_characters_are_left_out_of_a_given_file(tmp_path: Path) -> None:
    # a right-to-left override would show the name reordered; a control character is no part of a name
    assert answer_target(tmp_path, "q", "notes/he\u202ello\x07.md") == "notes/hello.md"
    assert answer_target(tmp_path, "q", "\u200fnotes/heap") == "notes/heap.md"


def test_a_given_file_already_in_the_vault_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "heap.md").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError) as refused:
        answer_target(tmp_path, "q", "heap")
    assert str(refused.value) == "heap.md: already in the vault; a saved answer never overwrites a note"
    # FILE as the command line names the argument (`ask --save FILE`)
    assert refused.value.hint == "name another FILE, or leave it out for a new name in answers/"
    assert (tmp_path / "heap.md").read_text(encoding="utf-8") == "mine"
