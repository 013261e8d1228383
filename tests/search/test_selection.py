"""The selection rule: one copy of a page, the question's language first, where the scores stop separating, and
weak matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlmsync.search import NoteIndex
from nlmsync.search.hits import Evidence, SearchHit
from nlmsync.search.query import STOP_WORDS, coverage_terms, function_words
from nlmsync.search.selection import (
    OTHER_LANGUAGE_WEIGHT,
    coverage,
    one_copy_each,
    select_notes,
    separated,
)
from nlmsync.store.index_codec import NoteFacts


def hits(*scored: tuple[str, float]) -> list[SearchHit]:
    return [SearchHit(path, score, ()) for path, score in scored]


def test_a_clear_question_keeps_the_notes_above_the_largest_drop() -> None:
    assert separated([10, 9.5, 3, 2.9, 2.8, 2.7], top_n=15, cutoff_ratio=0.2, min_k=1) == 2


def test_a_vague_question_keeps_every_note_of_the_window_when_no_drop_is_large() -> None:
    scores = [10, 9.9, 9.8, 9.7, 9.65, 9.6, 9.55, 9.5]
    assert separated(scores, top_n=15, cutoff_ratio=0.4, min_k=1) == len(scores)
    # the last of the window is compared with the next candidate: a large drop there still keeps them all
    assert separated([*scores, 1.0], top_n=15, cutoff_ratio=0.4, min_k=1) == len(scores)


def test_notes_below_the_cutoff_are_not_kept_and_min_k_and_top_n_bound_the_rest() -> None:
    assert separated([10, 3.9, 3.8], top_n=15, cutoff_ratio=0.4, min_k=0) == 1
    assert separated([10, 1, 0.5, 0.1], top_n=15, cutoff_ratio=0.4, min_k=3) == 3
    assert separated([5, 5, 5, 5, 5], top_n=3, cutoff_ratio=0.4, min_k=4) == 3
    assert separated([5, 5, 5, 5, 5], top_n=2, cutoff_ratio=0.0, min_k=0) == 2
    assert separated([], top_n=15, cutoff_ratio=0.4, min_k=3) == 0


def test_copies_of_a_page_in_parallel_language_folders_are_one_candidate_named_in_the_questions_language() -> None:
    ranked = hits(("pages.cs/common/tar.md", 9.0), ("pages.hu/common/tar.md", 8.0), ("pages/common/zip.md", 7.0),
                  ("pages/common/tar.md", 6.0))
    facts = {"pages.cs/common/tar.md": NoteFacts("cs"), "pages.hu/common/tar.md": NoteFacts("hu"),
             "pages/common/zip.md": NoteFacts("en"), "pages/common/tar.md": NoteFacts("en")}
    candidates = one_copy_each(ranked, facts, {"cs", "hu", "en"}, "en")
    assert [(hit.path, hit.score) for hit in candidates] == [("pages/common/tar.md", 9.0), ("pages/common/zip.md", 7.0)]
    # with no copy in the question's language, the best-ranked copy stands for the page
    assert [hit.path for hit in one_copy_each(ranked, facts, {"cs", "hu", "en"}, "de")] == [
        "pages.cs/common/tar.md", "pages/common/zip.md"]


def test_a_folder_named_like_a_language_no_note_is_written_in_is_no_language_folder() -> None:
    ranked = hits(("it/setup.md", 5.0), ("setup.md", 4.0))
    facts = {"it/setup.md": NoteFacts("en"), "setup.md": NoteFacts("en")}
    assert len(one_copy_each(ranked, facts, {"en"}, "en")) == 2


def test_copies_named_by_front_matter_or_by_the_same_code_in_another_language_are_one_candidate() -> None:
    code = ("code:abc",)
    ranked = hits(("el/Ενσωμάτωση.md", 9.0), ("en/Embed files.md", 5.0), ("en/Other.md", 4.0), ("de/Andere.md", 3.0),
                  ("en/Third.md", 2.0))
    facts = {"el/Ενσωμάτωση.md": NoteFacts("el", ("fm:embeds",)), "en/Embed files.md": NoteFacts("en", ("fm:embeds",)),
             "en/Other.md": NoteFacts("en", code), "de/Andere.md": NoteFacts("de", code),
             "en/Third.md": NoteFacts("en", code)}
    candidates = one_copy_each(ranked, facts, {"el", "en", "de"}, "en")
    # the same code in two notes of one language does not make them copies
    assert [hit.path for hit in candidates] == ["en/Embed files.md", "en/Other.md", "en/Third.md"]


def test_a_note_in_another_language_counts_part_of_its_score() -> None:
    ranked = hits(("de/a.md", 10.0), ("en/b.md", 6.0))
    facts = {"de/a.md": NoteFacts("de"), "en/b.md": NoteFacts("en")}
    chosen = select_notes(ranked, facts, {"de": 5, "en": 5}, "en", Evidence(10, {}), {}, top_n=15, cutoff_ratio=0.0,
                          min_k=1)
    assert [(hit.path, hit.score) for hit in chosen.candidates] == [("en/b.md", 6.0),
                                                                    ("de/a.md", 10.0 * OTHER_LANGUAGE_WEIGHT)]


def test_a_question_whose_telling_word_no_note_holds_is_a_weak_match_and_selects_nothing() -> None:
    evidence = Evidence(1000, {"heapsort": 0, "work": 300, "how": 900, "does": 800})
    terms = {"how": 0.25, "does": 0.25, "heapsort": 1.0, "work": 1.0}
    ranked = [SearchHit("physics.md", 3.0, ("work",))]
    assert coverage(ranked[0], terms, evidence) < 0.35
    weak = select_notes(ranked, {}, {"en": 1000}, "en", evidence, terms, top_n=15, cutoff_ratio=0.4, min_k=3)
    assert weak.weak and weak.chosen == [] and weak.candidates == ranked
    # every word held somewhere: a poor best hit is still sent
    held = Evidence(1000, {**evidence.dfs, "heapsort": 2})
    assert not select_notes(ranked, {}, {"en": 1000}, "en", held, terms, top_n=15, cutoff_ratio=0.4, min_k=3).weak


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


CZECH = ("# git pipeline\n\n> Spravuje pipeline v systému CI a zobrazuje jejich stav a výsledky.\n\n"
         "- Zobrazí seznam všech pipeline projektu:\n\n`git pipeline list`\n")
ENGLISH = ("# git pipeline\n\n> Manage the pipelines of a CI system and show their state and results.\n\n"
           "- List every pipeline of the project:\n\n`git pipeline list`\n")


def test_an_english_question_selects_the_english_copy_of_a_page_its_czech_copy_outranks(tmp_path: Path) -> None:
    _write(tmp_path, {"pages.cs/common/git-pipeline.md": CZECH, "pages/common/git-pipeline.md": ENGLISH,
                      "pages/common/ls.md": "# ls\n\n> List the files of a folder, with their sizes and dates.\n",
                      "pages.cs/common/ls.md": "# ls\n\n> Vypíše soubory ve složce s jejich velikostmi a daty.\n"})
    index = NoteIndex(tmp_path)
    hits_ = index.search("git pipeline")
    assert {hit.path for hit in hits_[:2]} == {"pages.cs/common/git-pipeline.md", "pages/common/git-pipeline.md"}
    selection = index.selection("show the CI pipeline of a git project")
    assert selection.language == "en"
    assert [hit.path for hit in selection.chosen][:1] == ["pages/common/git-pipeline.md"]
    assert "pages.cs/common/git-pipeline.md" not in {hit.path for hit in selection.chosen}
    czech = index.selection("zobrazí pipeline projektu v systému CI")
    assert czech.language == "cs" and czech.chosen[0].path == "pages.cs/common/git-pipeline.md"
    assert index.facts(["pages.cs/common/ls.md"])["pages.cs/common/ls.md"].lang == "cs"


# A vault of a few notes on files, folders, search and links in German, French and English: the question's words
# a function word of its language, and no note holds "wo" or "où"
FILES_VAULT = {
    "de/Dateien.md": "# Dateien\n\nEine Datei liegt in einem Ordner des Tresors. Du kannst eine Datei verschieben, "
                     "umbenennen oder löschen.\n",
    "de/Ordner.md": "# Ordner\n\nEin Ordner fasst Notizen zusammen. Die Seitenleiste zeigt jeden Ordner des Tresors.\n",
    "de/Suche.md": "# Suche\n\nDie Suche findet Notizen nach ihrem Text. Sie zeigt die Treffer in der Seitenleiste.\n",
    "de/Links.md": "# Links\n\nEin Link verbindet zwei Notizen. Wenn du eine Notiz umbenennst, werden die Links "
                   "angepasst.\n",
    "fr/Fichiers.md": "# Fichiers\n\nUn fichier se trouve dans un dossier du coffre. Vous pouvez déplacer, renommer "
                      "ou supprimer un fichier.\n",
    "fr/Dossiers.md": "# Dossiers\n\nUn dossier regroupe des notes. La barre latérale montre chaque dossier du "
                      "coffre.\n",
    "fr/Recherche.md": "# Recherche\n\nLa recherche trouve les notes par leur texte. Elle montre les résultats dans "
                       "la barre latérale.\n",
    "fr/Liens.md": "# Liens\n\nUn lien relie deux notes. Quand vous renommez une note, les liens sont mis à jour.\n",
    "en/Files.md": "# Files\n\nA file lives in a folder of the vault. You can move, rename or delete a file.\n",
    "en/Folders.md": "# Folders\n\nA folder groups notes. The sidebar shows every folder of the vault.\n",
    "en/Search.md": "# Search\n\nSearch finds notes by their text. It shows the results in the sidebar.\n",
    "en/Links.md": "# Links\n\nA link joins two notes. When you rename a note, its links are updated.\n",
}


@pytest.mark.parametrize(("question", "language", "answer"), [
    ("wo ist die Datei", "de", "de/Dateien.md"),
    ("où est le fichier", "fr", "fr/Fichiers.md"),
    ("where is the file", "en", "en/Files.md"),
])
def test_a_question_whose_unheld_word_is_a_stop_word_of_its_language_is_no_weak_match(
        tmp_path: Path, question: str, language: str, answer: str) -> None:
    _write(tmp_path, FILES_VAULT)
    selection = NoteIndex(tmp_path).selection(question)
    assert selection.language == language
    assert not selection.weak
    assert selection.chosen[0].path == answer


@pytest.mark.parametrize(("question", "language"), [("wo ist der Kühlschrank", "de"), ("où est le frigo", "fr")])
def test_a_question_in_another_language_whose_content_word_no_note_holds_is_still_a_weak_match(
        tmp_path: Path, question: str, language: str) -> None:
    _write(tmp_path, FILES_VAULT)
    selection = NoteIndex(tmp_path).selection(question)
    assert selection.language == language and selection.weak and selection.chosen == []


def test_the_stop_words_of_a_question_are_its_languages() -> None:
    assert function_words("en") is STOP_WORDS and function_words("") is STOP_WORDS
    german, french = function_words("de"), function_words("fr")
    assert {"wo", "ist", "die", "ich"} <= german and "datei" not in german and "the" not in german
    assert {"où", "est", "le"} <= french and "fichier" not in french
    assert "og" in function_words("no")  # Norwegian, which the language model names "no" and the lists "nb"
    assert function_words("tlh") == frozenset()  # a language no list is kept for: no word is a stop word
    terms = coverage_terms("wo ist die Datei", language="de")
    assert terms == {"wo": 0.25, "ist": 0.25, "die": 0.25, "datei": 1.0}
