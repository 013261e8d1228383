"""Reading attachments' text: each format by its library, page by page, once per content, and a clear notice
for each file that has no text or whose reading had to be stopped."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest
from tests.documents.pdfs import expanding_page, pdf, scanned_page, text_page

from nlmsync.documents import PAGE, SECTION, SLIDE, DocumentReader, DocumentText, hash_file
from nlmsync.documents import model as documents_model
from nlmsync.documents import reader as reader_module


class MemoryCache:
    """A `TextCache` in a dict, counting what is asked of it."""

    def __init__(self) -> None:
        self.texts: dict[str, DocumentText] = {}
        self.files: dict[tuple[str, int, int], str] = {}
        self.with_text: dict[str, bool] = {}

    def get(self, content_hash: str) -> DocumentText | None:
        return self.texts.get(content_hash)

    def put(self, document: DocumentText) -> None:
        self.texts[document.content_hash] = document

    def hash_of(self, path: str, mtime_ns: int, size: int) -> str | None:
        return self.files.get((path, mtime_ns, size))

    def record(self, path: str, mtime_ns: int, size: int, content_hash: str, has_text: bool) -> None:
        self.files[(path, mtime_ns, size)] = content_hash
        self.with_text[path] = has_text


def written(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def read(path: Path, **options: float) -> DocumentText:
    with DocumentReader(**options) as reader:  # type: ignore[arg-type]
        return reader.read(path)


def test_a_pdf_is_read_page_by_page(tmp_path: Path) -> None:
    path = written(tmp_path, "paper.pdf", pdf(text_page("Heapsort builds a max heap", "then sorts in place"),
                                              text_page("Quicksort (the other one) partitions")))
    document = read(path)
    assert document.unit == PAGE
    assert document.pages == ("Heapsort builds a max heap\nthen sorts in place", "Quicksort (the other one) partitions")
    assert document.notice is None
    assert document.content_hash == hash_file(path)[0]
    assert document.locate("the other one partitions") == 2
    assert document.locate("max heap, then sorts") == 1  # across a line, punctuation aside
    assert document.locate("nowhere in it") is None
    assert document.marked_text.startswith("[page 1]\nHeapsort") and "\n\n[page 2]\nQuicksort" in document.marked_text


def test_a_quote_running_from_one_page_into_the_next_is_on_the_first() -> None:
    document = DocumentText("h", PAGE, ("alpha beta gamma", "delta epsilon"))
    assert document.locate("gamma delta") == 1


@pytest.mark.parametrize(("data", "notice"), [
    (pdf(text_page("secret"), encrypt=True), documents_model.ENCRYPTED),
    (pdf(scanned_page(), image=True), documents_model.NO_TEXT_LAYER),
    (b"%PDF-1.7\nthis is no PDF at all", "cannot be read (data format error)"),
    (pdf(text_page("cut short"))[:120], "cannot be read (data format error)"),
], ids=["encrypted", "scanned", "garbage", "truncated"])
def test_a_pdf_without_readable_text_says_why(tmp_path: Path, data: bytes, notice: str) -> None:
    document = read(written(tmp_path, "file.pdf", data))
    assert not document.has_text
    assert document.notice == notice
    assert document.cacheable


def test_a_file_over_notebooklms_size_limit_is_not_read(tmp_path: Path) -> None:
    path = tmp_path / "huge.pdf"
    with path.open("wb") as file:
        file.truncate(200 * 1024 * 1024 + 1)  # sparse: no disk used
    with DocumentReader() as reader:
        document = reader.read(path)
        assert reader.files_read == 0
    assert document.notice == documents_model.TOO_LARGE and document.content_hash == "" and not document.cacheable


def test_a_file_that_changes_while_it_is_read_is_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = written(tmp_path, "draft.pdf", pdf(text_page("first version")))
    real_hash = reader_module.hash_file

    def hash_then_change(target: str | os.PathLike[str]) -> tuple[str, os.stat_result, os.stat_result]:
        found = real_hash(target)
        Path(target).write_bytes(pdf(text_page("second version")))  # written between the hash and the reading
        return found

    monkeypatch.setattr(reader_module, "hash_file", hash_then_change)
    cache = MemoryCache()
    with DocumentReader(cache) as reader:
        document = reader.read(path, "draft.pdf")
    assert document.notice == documents_model.CHANGED_WHILE_READ and not document.pages
    assert cache.texts == {} and cache.files == {}


def test_the_same_bytes_are_read_once_wherever_they_are(tmp_path: Path) -> None:
    data = pdf(text_page("read me once"))
    first, moved = written(tmp_path, "a.pdf", data), written(tmp_path, "b.pdf", data)
    cache = MemoryCache()
    with DocumentReader(cache) as reader:
        assert reader.read(first, "a.pdf").pages == ("read me once",)
        assert reader.read(moved, "b.pdf").pages == ("read me once",)
        assert reader.files_read == 1
    assert list(cache.texts) == [hash_file(first)[0]]


def test_an_unchanged_file_is_not_even_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = written(tmp_path, "a.pdf", pdf(text_page("known")))
    cache = MemoryCache()
    with DocumentReader(cache) as reader:
        reader.read(path, "a.pdf")

    def no_hashing(target: str | os.PathLike[str]) -> tuple[str, os.stat_result, os.stat_result]:
        raise AssertionError(f"{target} hashed again")

    monkeypatch.setattr(reader_module, "hash_file", no_hashing)
    with DocumentReader(cache) as reader:
        assert reader.read(path, "a.pdf").pages == ("known",)


def test_word_powerpoint_and_epub_are_read_by_section_and_slide(tmp_path: Path) -> None:
    import docx
    import pptx

    word = docx.Document()
    word.add_paragraph("Opening words")
    word.add_heading("Results", level=1)
    word.add_paragraph("The measured figures")
    word.save(str(tmp_path / "report.docx"))
    deck = pptx.Presentation()
    for title in ("First slide", "Second slide"):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
    deck.save(str(tmp_path / "slides.pptx"))
    with zipfile.ZipFile(tmp_path / "book.epub", "w") as book:
        book.writestr("mimetype", "application/epub+zip")
        book.writestr("META-INF/container.xml", '<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
                      '<rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>')
        book.writestr("OEBPS/book.opf", '<package xmlns="http://www.idpf.org/2007/opf"><manifest>'
                      '<item id="one" href="one.xhtml"/><item id="two" href="text/two.xhtml"/></manifest>'
                      '<spine><itemref idref="one"/><itemref idref="two"/></spine></package>')
        book.writestr("OEBPS/one.xhtml", "<html><head><style>p {}</style></head><body><h1>Chapter one</h1>"
                      "<p>It was a dark &amp; stormy night.</p><script>no()</script></body></html>")
        book.writestr("OEBPS/text/two.xhtml", "<html><body><p>Chapter two begins</p></body></html>")
    with DocumentReader() as reader:
        report, slides, epub = (reader.read(tmp_path / name) for name in ("report.docx", "slides.pptx", "book.epub"))
    assert (report.unit, report.pages) == (SECTION, ("Opening words", "Results\nThe measured figures"))
    assert (slides.unit, slides.pages) == (SLIDE, ("First slide", "Second slide"))
    assert (epub.unit, epub.pages) == (SECTION, ("Chapter one\nIt was a dark & stormy night.", "Chapter two begins"))
    assert report.locate("the measured figures") == 2


@pytest.mark.parametrize("name", ["report.docx", "slides.pptx", "book.epub"])
def test_a_damaged_office_file_or_book_says_so(tmp_path: Path, name: str) -> None:
    document = read(written(tmp_path, name, b"PK\x03\x04 not really a zip"))
    assert document.notice is not None and document.notice.startswith("cannot be read (not a")


def test_text_files_are_read_as_utf8(tmp_path: Path) -> None:
    assert read(written(tmp_path, "data.csv", "\ufeffa,b\n1,2\n".encode())).pages == ("a,b\n1,2\n",)
    latin = read(written(tmp_path, "old.txt", "café".encode("latin-1")))
    assert latin.notice == documents_model.NOT_TEXT and not latin.pages


def test_images_are_not_read(tmp_path: Path) -> None:
    with DocumentReader() as reader:
        document = reader.read(written(tmp_path, "shot.png", b"\x89PNG\r\n\x1a\n"))
        assert reader.files_read == 0
    assert document.pages == () and document.notice is None and document.content_hash


@pytest.mark.slow
def test_a_pdf_crafted_to_need_memory_stops_its_reader_and_the_next_file_is_read(tmp_path: Path) -> None:
    bomb = written(tmp_path, "bomb.pdf", pdf(expanding_page(400), compress=True))
    assert bomb.stat().st_size < 2 * 1024 * 1024
    fine = written(tmp_path, "fine.pdf", pdf(text_page("still read")))
    with DocumentReader(memory=256 * 1024 * 1024) as reader:
        stopped = reader.read(bomb)
        after = reader.read(fine)
    assert stopped.notice is not None and "stopped" in stopped.notice and not stopped.pages
    assert after.pages == ("still read",)


@pytest.mark.slow
def test_a_pdf_that_takes_too_long_is_stopped(tmp_path: Path) -> None:
    slow = written(tmp_path, "slow.pdf", pdf(*[expanding_page(20)] * 20, compress=True))
    with DocumentReader(seconds=0.5) as reader:
        document = reader.read(slow)
    assert document.notice == documents_model.TIMED_OUT.format(seconds=0.5)


@pytest.mark.slow
def test_thousands_of_pages_and_deep_nesting_are_read_within_bounds(tmp_path: Path) -> None:
    many = written(tmp_path, "many.pdf", pdf(*[text_page("a page")] * 5000))
    nested = written(tmp_path, "nested.pdf", pdf(b"BT /F1 12 Tf " + b"[" * 100_000 + b"]" * 100_000 + b" ET"))
    with DocumentReader(seconds=60) as reader:
        pages = reader.read(many)
        deep = reader.read(nested)
    assert len(pages.pages) == 5000 and pages.words == 10_000
    assert deep.notice == documents_model.NO_TEXT_LAYER


def test_files_announced_ahead_are_handed_over_before_they_are_asked_for(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(6)]
    with DocumentReader(ahead=4) as reader:
        reader.expect((p, None) for p in papers)
        assert reader.files_read == 4  # the reading process has them while the caller works on the first
        texts = [reader.read(p).pages for p in papers]
    assert texts == [(f"paper {n}",) for n in range(6)] and reader.files_read == 6


def test_a_file_passed_over_is_not_read_for_the_files_after_it(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(3)]
    with DocumentReader(ahead=1) as reader:
        reader.expect((p, None) for p in papers)
        assert reader.read(papers[2]).pages == ("paper 2",)
        assert reader.read(papers[1]).pages == ("paper 1",)


@pytest.mark.slow
def test_among_files_announced_ahead_one_that_stops_its_reader_leaves_the_others_read(tmp_path: Path) -> None:
    bomb = written(tmp_path, "bomb.pdf", pdf(expanding_page(400), compress=True))
    slow = written(tmp_path, "slow.pdf", pdf(*[expanding_page(20)] * 20, compress=True))
    fine = [written(tmp_path, f"fine{n}.pdf", pdf(text_page(f"still read {n}"))) for n in range(3)]
    order = [fine[0], bomb, fine[1], slow, fine[2]]
    with DocumentReader(memory=256 * 1024 * 1024, seconds=2) as reader:
        reader.expect((p, None) for p in order)
        read = {p.name: reader.read(p) for p in order}
    assert [read[f"fine{n}.pdf"].pages for n in range(3)] == [(f"still read {n}",) for n in range(3)]
    assert read["bomb.pdf"].notice is not None and "stopped" in read["bomb.pdf"].notice
    assert read["slow.pdf"].notice == documents_model.TIMED_OUT.format(seconds=2)


def test_files_announced_ahead_are_spread_over_the_reading_processes_and_given_back_in_order(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(8)]
    with DocumentReader(processes=2, ahead=4) as reader:
        reader.expect((p, None) for p in papers)
        assert reader.processes_started == 2 and reader.files_read == 4
        texts = [reader.read(p).pages for p in papers]
        assert reader.processes_started == 2
    assert texts == [(f"paper {n}",) for n in range(8)] and reader.files_read == 8


def test_files_read_one_at_a_time_need_one_reading_process(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(3)]
    with DocumentReader(processes=4) as reader:
        assert [reader.read(p).pages for p in papers] == [(f"paper {n}",) for n in range(3)]
        assert reader.processes_started == 1


def test_a_few_files_announced_ahead_need_one_reading_process(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(5)]
    with DocumentReader(processes=4, ahead=4) as reader:
        reader.expect((p, None) for p in papers)
        assert [reader.read(p).pages for p in papers] == [(f"paper {n}",) for n in range(5)]
        assert reader.processes_started == 1


def test_more_reading_processes_start_as_more_files_wait_for_them(tmp_path: Path) -> None:
    papers = [written(tmp_path, f"p{n}.pdf", pdf(text_page(f"paper {n}"))) for n in range(10)]
    with DocumentReader(processes=4, ahead=4) as reader:
        reader.expect((p, None) for p in papers)  # a second while 4 or more wait; a third would need 8
        assert reader.processes_started == 2
        assert [reader.read(p).pages for p in papers] == [(f"paper {n}",) for n in range(10)]


@pytest.mark.parametrize(("cores", "processes"), [(1, 1), (2, 2), (4, 4), (64, 4)])
def test_a_reader_runs_as_many_processes_as_the_cores_it_may_use_up_to_four(
        monkeypatch: pytest.MonkeyPatch, cores: int, processes: int) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert reader_module.reading_processes() == processes
    assert DocumentReader().processes == processes


@pytest.mark.slow
def test_a_file_that_stops_one_reading_process_leaves_the_others_and_the_files_after_it_read(tmp_path: Path) -> None:
    bomb = written(tmp_path, "bomb.pdf", pdf(expanding_page(400), compress=True))
    slow = written(tmp_path, "slow.pdf", pdf(*[expanding_page(20)] * 20, compress=True))
    fine = [written(tmp_path, f"fine{n}.pdf", pdf(text_page(f"still read {n}"))) for n in range(6)]
    order = [bomb, slow, *fine]  # the first two go to two processes, the others after them to both
    with DocumentReader(memory=256 * 1024 * 1024, seconds=2, processes=2, ahead=4) as reader:
        reader.expect((p, None) for p in order)
        read = {p.name: reader.read(p) for p in order}
        assert reader.processes_started == 4  # each of the two started again after the file that stopped it
    assert [read[f"fine{n}.pdf"].pages for n in range(6)] == [(f"still read {n}",) for n in range(6)]
    assert read["bomb.pdf"].notice is not None and "stopped" in read["bomb.pdf"].notice
    assert read["slow.pdf"].notice == documents_model.TIMED_OUT.format(seconds=2)
