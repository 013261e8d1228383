"""A note's language as a sync tells it: by the model for every note a small sync reads, and for a large one by a
sample of the notes read, the rest presumed from their folders' where the folder's told notes agree, told where
they do not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import nlmsync.text.language as language
from nlmsync.search import NoteIndex
from nlmsync.search.note_facts import MIN_TOLD, TELL_EVERY, folder_codes, presumed_languages
from nlmsync.store.db import open_database

THINGS = ["kettle", "garden", "bicycle", "window", "letter", "ladder", "carpet", "basket", "lantern", "mirror",
          "wardrobe", "blanket", "bucket", "candle", "curtain"]
DINGE = ["Wasserkocher", "Garten", "Fahrrad", "Fenster", "Brief", "Leiter", "Teppich", "Korb", "Laterne", "Spiegel",
         "Kleiderschrank", "Decke", "Eimer", "Kerze", "Vorhang"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "morning", "evening",
        "weekend", "holiday", "winter", "summer", "spring", "autumn"]
TAGE = ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag", "Morgen", "Abend",
        "Wochenende", "Feiertag", "Winter", "Sommer", "Frühling", "Herbst"]


def english(i: int) -> str:
    thing, day = THINGS[i % len(THINGS)], DAYS[i // len(THINGS) % len(DAYS)]
    return (f"# Note {i}\n\nWe clean the old {thing} every {day} before the guests arrive, "
            "because nobody wants to see the dust that gathers on it.\n")


def german(i: int) -> str:
    ding, tag = DINGE[i % len(DINGE)], TAGE[i // len(DINGE) % len(TAGE)]
    return (f"# Notiz {i}\n\nWir putzen den alten {ding} jeden {tag}, bevor die Gäste kommen, "
            "weil niemand den Staub sehen möchte, der sich darauf sammelt.\n")


def write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


@pytest.fixture
def told(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The samples the language model is asked about, in order."""
    asked: list[str] = []
    original: Callable[[str], str] = language._sample_language

    def counting(sample: str) -> str:
        asked.append(sample)
        return original(sample)

    monkeypatch.setattr(language, "_sample_language", counting)
    return asked


def test_a_notes_language_is_its_nearest_folders_where_enough_notes_told_there_agree() -> None:
    told = {f"en/guide/{i}.md": "en" for i in range(MIN_TOLD)}
    told |= {f"de/{i}.md": "de" for i in range(MIN_TOLD - 1)} | {"de/x.md": "en"}  # 3 of 4: below the agreement
    told |= {f"en/{i}.md": "en" for i in range(MIN_TOLD)}
    told |= {"en/api/a.md": "fr"}  # one note told in a folder says nothing of it: the folder above does
    presumed = presumed_languages(["en/guide/new.md", "en/api/b.md", "de/new.md", "other/new.md", "new.md"], told)
    assert presumed == {"en/guide/new.md": "en", "en/api/b.md": "en"}


def test_a_folder_family_names_its_codes_whatever_its_notes_are_told_to_be_in() -> None:
    paths = ["pages/common/tar.md", "pages.cs/common/tar.md", "pages.uz/common/tar.md", "notes.txt/a.md"]
    assert folder_codes(paths, {"en", "cs"}) == {"en", "cs", "uz"}
    assert folder_codes(paths, {"en"}) == {"en"}  # no code of the family is a language of the vault


def test_a_large_sync_tells_a_sample_and_presumes_the_rest_from_their_folders(tmp_path: Path, told: list[str]) -> None:
    count = 6 * TELL_EVERY * MIN_TOLD // 2  # each language folder has more notes than it needs to be presumed
    files = {f"en/{i:04}.md": english(i) for i in range(count)} | {f"de/{i:04}.md": german(i) for i in range(count)}
    # a folder of both languages says neither: its notes are told, each
    files |= {f"mixed/{i:04}.md": english(i) if i % 2 else german(i) for i in range(40)}
    write(tmp_path, files)
    index = NoteIndex(tmp_path)
    index.sync()
    facts = index.facts(list(files))
    wrong = {path: facts[path].lang for path in files
             if facts[path].lang != ("de" if path.startswith("de/") or "Wir putzen" in files[path] else "en")}
    assert wrong == {}
    assert len(told) < len(files) // 4
    assert index.languages() == {"en": count + 20, "de": count + 20}


def test_a_small_sync_tells_every_note_it_reads_and_no_other(tmp_path: Path, told: list[str]) -> None:
    count = 6 * TELL_EVERY * MIN_TOLD // 2
    write(tmp_path, {f"en/{i:04}.md": english(i) for i in range(count)})
    index = NoteIndex(tmp_path)
    index.sync()
    told.clear()
    write(tmp_path, {"en/0007.md": german(7), "en/0008.md": english(1000)})
    index.mark_path_modified("en/0007.md")
    index.mark_path_modified("en/0008.md")
    index.sync()
    assert len(told) == 2
    assert {path: fact.lang for path, fact in index.facts(["en/0007.md", "en/0008.md"]).items()} == {
        "en/0007.md": "de", "en/0008.md": "en"}


def test_a_new_process_after_two_edits_tells_the_two_and_no_other(tmp_path: Path, told: list[str]) -> None:
    count = 6 * TELL_EVERY * MIN_TOLD // 2  # a vault whose build sampled: the edits must not re-tell it
    write(tmp_path, {f"en/{i:04}.md": english(i) for i in range(count)})
    state = tmp_path / ".nlmsync" / "state.db"
    NoteIndex(tmp_path, open_database(state)).sync()
    told.clear()
    write(tmp_path, {"en/0007.md": german(7), "en/0008.md": english(1000)})
    index = NoteIndex(tmp_path, open_database(state))  # what `nlmsync index` or a refresh opens: no marks
    report = index.sync()
    assert (report.updated, report.added) == (2, 0)
    assert len(told) == 2
    assert {path: fact.lang for path, fact in index.facts(["en/0007.md", "en/0008.md"]).items()} == {
        "en/0007.md": "de", "en/0008.md": "en"}
    assert index.languages() == {"en": count - 1, "de": 1}


def test_a_large_sync_tells_again_an_edited_note_told_before_in_another_language_than_its_folders(
        tmp_path: Path, told: list[str]) -> None:
    small = TELL_EVERY * MIN_TOLD - 1  # a build that tells every note: the German note in en/ is told German
    files = {f"en/{i:04}.md": english(i) for i in range(small)} | {"en/0050.md": german(50)}
    write(tmp_path, files)
    state = tmp_path / ".nlmsync" / "state.db"
    NoteIndex(tmp_path, open_database(state)).sync()
    told.clear()
    # a sync reading enough notes to sample: the German note, edited (still German), read where it is not sampled
    edits = {f"en/{i:04}.md": english(i + 1000) for i in range(small + 40) if i != 50} | {"en/0050.md": german(1050)}
    write(tmp_path, edits)
    index = NoteIndex(tmp_path, open_database(state))
    index.sync()
    assert 0 < len(told) < len(edits) // 4
    assert index.facts(["en/0050.md"])["en/0050.md"].lang == "de"
    assert index.languages() == {"en": small + 39, "de": 1}
