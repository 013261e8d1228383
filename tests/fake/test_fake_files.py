"""File sources in the fake, as the real server takes them: named after the file, their text read as nlmsync
reads it, the title applied by a rename that a fault switch makes not take, the real server's refusals, a scanned
PDF or an image processed (NotebookLM reads them itself) and the files NotebookLM fails to process: those nlmsync's
reader cannot read at all, and those a fault switch names."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import model as documents
from nlmsync.documents import DocumentText
from nlmsync.fake import FakeNotebookLM, Faults
from nlmsync.fake.faults import build_faults, parse_fake_options
from nlmsync.fake.files import processed


def notebook(fake: FakeNotebookLM) -> str:
    return str(fake.apply("notebook_create", {"title": "N"})["notebook_id"])


def listed(fake: FakeNotebookLM, nb: str) -> list[str]:
    return [s["title"] for s in fake.apply("notebook_get", {"notebook_id": nb})["sources"]]


def paper(tmp_path: Path) -> Path:
    path = tmp_path / "paper.pdf"
    path.write_bytes(pdf(text_page("Tapirs browse at dusk"), text_page("and sleep by day")))
    return path


def test_a_file_source_holds_the_files_text_under_the_title_asked_for(tmp_path: Path) -> None:
    fake = FakeNotebookLM()
    nb = notebook(fake)
    added = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(paper(tmp_path)),
                                      "title": "paper.pdf · 0123abcd"})
    assert (added["status"], added["source_type"], added["title"]) == ("success", "file", "paper.pdf · 0123abcd")
    assert listed(fake, nb) == ["paper.pdf · 0123abcd"]
    content = fake.apply("source_get_content", {"source_id": added["source_id"]})
    assert "Tapirs browse at dusk" in content["content"] and "sleep by day" in content["content"]


def test_without_a_title_a_file_source_is_named_after_the_file(tmp_path: Path) -> None:
    fake = FakeNotebookLM()
    nb = notebook(fake)
    fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(paper(tmp_path))})
    assert listed(fake, nb) == ["paper.pdf"]


def test_a_rename_that_does_not_take_leaves_the_file_name_while_the_answer_says_the_title(tmp_path: Path) -> None:
    fake = FakeNotebookLM(faults=parse_fake_options(["--file-titles-ignored"]).faults)
    nb = notebook(fake)
    added = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(paper(tmp_path)),
                                      "title": "paper.pdf · 0123abcd"})
    assert added["title"] == "paper.pdf · 0123abcd"
    assert listed(fake, nb) == ["paper.pdf"]


def test_a_folder_outside_the_allowed_ones_is_refused_as_the_real_server_words_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    monkeypatch.setenv("NOTEBOOKLM_ALLOWED_FILE_DIRS", str(allowed))
    fake = FakeNotebookLM()
    nb = notebook(fake)
    refused = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(paper(tmp_path))})
    assert refused == {"status": "error", "error": f"File path '{(tmp_path / 'paper.pdf').resolve()}' is outside "
                                                   "allowed directories configured by NOTEBOOKLM_ALLOWED_FILE_DIRS."}
    inside = allowed / "paper.pdf"
    inside.write_bytes(paper(tmp_path).read_bytes())
    assert fake.apply("source_add", {"notebook_id": nb, "source_type": "file",
                                     "file_path": str(inside)})["status"] == "success"


@pytest.mark.parametrize(("name", "data", "said"), [
    ("missing.pdf", None, "File not found: "),
    ("empty.pdf", b"", "File is empty: "),
    ("tool.exe", b"MZ", "Unsupported file type: .exe"),
])
def test_files_the_real_server_does_not_upload(tmp_path: Path, name: str, data: bytes | None, said: str) -> None:
    path = tmp_path / name
    if data is not None:
        path.write_bytes(data)
    fake = FakeNotebookLM()
    nb = notebook(fake)
    refused = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(path)})
    assert refused["status"] == "error" and refused["error"].startswith(f"Could not add file source: {said}")
    assert "Received path: " in refused["hint"] and listed(fake, nb) == []


def test_a_file_notebooklm_cannot_process_stays_as_a_failed_source(tmp_path: Path) -> None:
    locked = tmp_path / "locked.pdf"
    locked.write_bytes(pdf(text_page("secret"), encrypt=True))
    state = tmp_path / "fake.json"
    fake = FakeNotebookLM(state_path=state)
    nb = notebook(fake)
    failed = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(locked),
                                       "title": "locked.pdf · 0123abcd"})
    assert failed["status"] == "error" and "failed to process in NotebookLM" in failed["error"]
    assert listed(fake, nb) == ["locked.pdf"]
    assert fake.calls[-1].applied
    assert listed(FakeNotebookLM(state_path=state), nb) == ["locked.pdf"]  # journaled like any add


SCANNED = pdf(b"q 100 0 0 100 0 0 cm /Im1 Do Q", image=True)
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


@pytest.mark.parametrize(("name", "data"), [("scan.pdf", SCANNED), ("shot.png", PNG)])
def test_a_scanned_pdf_or_an_image_is_processed_under_its_title_holding_no_text(
        tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    fake = FakeNotebookLM()
    nb = notebook(fake)
    added = fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(path),
                                      "title": f"{name} · 0123abcd", "wait": True})
    assert (added["status"], added["title"]) == ("success", f"{name} · 0123abcd")
    assert listed(fake, nb) == [f"{name} · 0123abcd"]
    content = fake.apply("source_get_content", {"source_id": added["source_id"]})
    assert (content["status"], content["content"], content["char_count"]) == ("success", "", 0)


@pytest.mark.parametrize(("notice", "text", "is_processed"), [
    (None, "", True),  # an image, audio or video: no text to read
    (None, "Tapirs", True),
    (documents.NO_TEXT_LAYER, "", True),
    (documents.TEXT_CUT, "Tapirs", True),
    (documents.ENCRYPTED, "", False),
    (documents.DAMAGED.format(why="data format error"), "", False),
    (documents.NOT_TEXT, "", False),
    (documents.TOO_LARGE, "", False),
    (documents.TIMED_OUT.format(seconds=120), "", False),
    (documents.OUT_OF_MEMORY.format(mib=1024), "", False),
    (documents.CRASHED.format(why="killed by signal 9"), "", False),
])
def test_notebooklm_fails_only_the_files_nlmsyncs_reader_could_not_read(
        notice: str | None, text: str, is_processed: bool) -> None:
    assert processed(DocumentText("h", "page", (text,), notice)) is is_processed


def test_the_processing_fails_switch_fails_the_files_it_names_by_name_or_path(tmp_path: Path) -> None:
    (tmp_path / "papers").mkdir()
    for name in ("keep.pdf", "bad.pdf · 0123abcd.pdf", "papers/other.pdf"):
        (tmp_path / name).write_bytes(pdf(text_page(f"the text of {name}")))
    fake = FakeNotebookLM(faults=parse_fake_options(["--processing-fails", "bad.pdf*",
                                                     "--processing-fails", "*/papers/*"]).faults)
    nb = notebook(fake)
    said = {name: fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "wait": True,
                                            "file_path": str(tmp_path / name)})
            for name in ("keep.pdf", "bad.pdf · 0123abcd.pdf", "papers/other.pdf")}
    assert said["keep.pdf"]["status"] == "success"
    for name in ("bad.pdf · 0123abcd.pdf", "papers/other.pdf"):
        assert said[name]["status"] == "error" and "failed to process in NotebookLM" in said[name]["error"]
    assert listed(fake, nb) == ["keep.pdf", "bad.pdf · 0123abcd.pdf", "other.pdf"]  # kept, as the real server does
    held = {s["title"]: fake.apply("source_get_content", {"source_id": s["id"]})["content"]
            for s in fake.apply("notebook_get", {"notebook_id": nb})["sources"]}
    assert "the text of keep.pdf" in held["keep.pdf"] and held["bad.pdf · 0123abcd.pdf"] == held["other.pdf"] == ""
    assert [c.applied for c in fake.calls if c.tool == "source_add"] == [True, True, True]


def test_the_fault_switches_are_faults_fields() -> None:
    assert parse_fake_options(["--file-titles-ignored"]).faults == Faults(file_titles_ignored=True)
    assert parse_fake_options(["--processing-fails", "scan*.pdf", "--processing-fails", "*.png"]).faults == Faults(
        processing_fails=("scan*.pdf", "*.png"))


@pytest.mark.parametrize(("value", "said"), [
    ("scan.pdf", "--processing-fails: expected a list of file names or globs, got 'scan.pdf'"),
    (["scan.pdf", ""], "--processing-fails: a file name or glob must not be empty"),
])
def test_a_processing_fails_value_that_names_no_file_is_refused(value: object, said: str) -> None:
    with pytest.raises(ValueError) as refused:
        build_faults(processing_fails=value)  # type: ignore[arg-type]
    assert str(refused.value) == said


def test_the_files_of_many_uploads_are_read_in_one_reading_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess

    started: list[object] = []
    real_popen = subprocess.Popen

    def counting_popen(*args: object, **kwargs: object) -> object:
        started.append(args)
        return real_popen(*args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(subprocess, "Popen", counting_popen)
    fake = FakeNotebookLM()
    nb = notebook(fake)
    for number in range(3):
        path = tmp_path / f"paper-{number}.pdf"
        path.write_bytes(pdf(text_page(f"Tapir number {number} browses at dusk")))
        fake.apply("source_add", {"notebook_id": nb, "source_type": "file", "file_path": str(path)})
    fake.close()
    assert len(started) == 1
    contents = [fake.apply("source_get_content", {"source_id": s["id"]})["content"]
                for s in fake.apply("notebook_get", {"notebook_id": nb})["sources"]]
    assert all(f"Tapir number {n}" in " ".join(contents) for n in range(3))
