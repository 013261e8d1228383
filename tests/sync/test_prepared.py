"""A note as a run prepares it (`prepared.load_notes`): read only when its file changed since its hashes were
recorded, or when the limits its parts were cut with have changed; an attachment as a run prepares it
(`attachments.files.FileReader`)."""

from __future__ import annotations

import os

from tests.sync.stub import Bench

from nlmsync.store import NoteHashes
from nlmsync.sync.attachments.files import FileReader, PreparedFile
from nlmsync.sync.branches import Branch
from nlmsync.sync.prepared import PreparedNote, load_notes, prepare_note, split_key
from nlmsync.sync.report import NoteOutcome


def recorded(bench: Bench, path: str, text: str, split: str = split_key()) -> dict[str, NoteHashes]:
    bench.write(path, text)
    stat = os.stat(bench.vault / path)
    return {path: NoteHashes(path, stat.st_mtime_ns, stat.st_size, split, prepare_note(path, text).hashes)}


def test_a_note_whose_file_kept_its_stat_is_known_by_its_hashes_unread(bench):
    known = recorded(bench, "a.md", "alpha words\n")
    [note] = load_notes(bench.deps(), ["a.md"], known=known)
    assert isinstance(note, PreparedNote) and not note.is_read and note.hashes == known["a.md"].hashes


def test_a_note_recorded_under_other_split_limits_is_read_and_cut_again(bench):
    """Lowering `source_max_words` makes an unchanged note over the new limit several sources: its record, made
    under the old limits, does not stand for it."""
    text = "\n\n".join(" ".join(f"w{i}x{j}" for j in range(40)) for i in range(5)) + "\n"
    known = recorded(bench, "big.md", text)
    [note] = load_notes(bench.deps(source_max_words=100), ["big.md"], known=known)
    assert isinstance(note, PreparedNote) and note.is_read and len(note.parts) == 3


def test_excluded_unreadable_and_empty_notes_become_outcomes(bench):
    bench.write("empty.md", "  \n")
    (bench.vault / "binary.md").write_bytes(b"\xff\xfe\x00")
    bench.write("private/secret.md", "secret\n")
    items = load_notes(bench.deps(exclude=["private/**"]), ["empty.md", "binary.md", "private/secret.md"],
                       found={"binary.md"})
    assert [(i.path, i.branch, i.reason) for i in items if isinstance(i, NoteOutcome)] == [
        ("empty.md", Branch.EXCLUDED, "empty"), ("binary.md", Branch.EXCLUDED, "binary"),
        ("private/secret.md", Branch.EXCLUDED, "excluded by pattern")]


def test_a_document_that_cannot_be_read_fails_saying_so(bench):
    (bench.vault / "locked.pdf").mkdir()  # a folder where the document was: no file to read
    items = load_notes(bench.deps(), ["locked.pdf"])
    assert [(i.path, i.branch) for i in items if isinstance(i, NoteOutcome)] == [("locked.pdf", Branch.FAILED)]
    failed = items[0]
    assert isinstance(failed, NoteOutcome) and failed.error is not None
    assert failed.error.startswith("locked.pdf: cannot be read (")


def test_an_attachment_that_cannot_be_read_fails_an_empty_one_is_excluded_and_the_others_are_prepared(bench):
    (bench.vault / "b.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"b" * 32)
    (bench.vault / "empty.png").write_bytes(b"")
    with FileReader(bench.deps()) as reader:
        items = reader.load(["gone.png", "empty.png", "b.png"])
    assert [(i.path, i.branch, i.reason) for i in items if isinstance(i, NoteOutcome)] == [
        ("gone.png", Branch.FAILED, None), ("empty.png", Branch.EXCLUDED, "empty")]
    assert [i.path for i in items if isinstance(i, PreparedFile) and i.content_hash] == ["b.png"]


def test_a_paragraph_of_exactly_the_words_a_source_holds_stays_whole_in_a_part_of_its_own() -> None:
    """Parts end between paragraphs while each paragraph fits: one of exactly the words a source holds is not cut
    into words to fill the part before it."""
    first, second = "alpha beta gamma\n\n", " ".join(f"word{i}" for i in range(10)) + "\n"
    parts = prepare_note("n.md", first + second, max_words=10).parts
    assert [part.text for part in parts] == [first, second]
