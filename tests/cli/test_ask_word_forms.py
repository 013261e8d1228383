"""`nlmsync ask` sends the notes that write a question's words in another form ("sorting" finds a note that says
"sort"), in the question's language, and ranks a note that writes the word itself above them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run

NOTES = {
    "shell/sort.md": "# Ordering lines\n\nUse sort to put the lines of a file in order, numbers first.\n",
    "ci/pipeline.md": "# Continuous integration\n\nEach pipeline runs the build and the test stage on every push.\n",
    "cards/expired.md": "# Bank cards\n\nA card that expired is refused at the till; order a new one.\n",
    "de/dateien.md": "# Ablage\n\nAlle Dateien liegen im Archiv, nach Jahr geordnet, und werden nie gelöscht.\n",
    "de/garten.md": "# Garten\n\nDie Rosen werden im frühen Frühjahr geschnitten, über einer nach außen zeigenden Knospe.\n",
    "cooking/pasta.md": "# Pasta\n\nBoil the water, salt it, and cook the pasta for nine minutes.\n",
    "garden/roses.md": "# Roses\n\nPrune the roses in early spring, above an outward facing bud.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    for path, text in NOTES.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text, encoding="utf-8")
    return tmp_path


def selected(capsys: pytest.CaptureFixture[str], vault: Path, question: str) -> list[str]:
    code, out, err = run(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Forms", "ask",
                         question, "--new", "--json")
    assert code == 0, err
    return [note["path"] for note in json.loads(out)["selected_notes"]]


@pytest.mark.parametrize(("question", "note"), [
    ("how do I go about sorting numbers", "shell/sort.md"),
    ("which pipelines do we have", "ci/pipeline.md"),
    ("what happens when my card expires", "cards/expired.md"),
    ("Datei", "de/dateien.md"),  # a German question finds German forms ("Datei": "Dateien")
])
def test_a_question_sends_the_note_that_writes_its_word_in_another_form(
        capsys: pytest.CaptureFixture[str], vault: Path, question: str, note: str) -> None:
    assert selected(capsys, vault, question)[:1] == [note]


def test_a_note_that_writes_the_questions_own_word_ranks_above_one_with_another_form(
        capsys: pytest.CaptureFixture[str], vault: Path) -> None:
    (vault / "shell/sorting.md").write_text("# Sorting\n\nSorting a list in place.\n", encoding="utf-8")
    assert selected(capsys, vault, "sorting")[:2] == ["shell/sorting.md", "shell/sort.md"]
