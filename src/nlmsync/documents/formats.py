"""The text of each kind of document, part by part, from its bytes: the well-kept library for each format.

PDF: pypdfium2 (PDFium, Chrome's reader); Word: python-docx; PowerPoint: python-pptx; EPUB: the standard library
(an EPUB is a zip of XHTML files in the order its package file lists). These run in the reading process
(`documents.worker`), never in nlmsync's own: a damaged or crafted file may take any time or memory there.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from html.parser import HTMLParser
from xml.etree import ElementTree

from nlmsync.documents.model import (
    DAMAGED,
    ENCRYPTED,
    MAX_TEXT_CHARS,
    NO_TEXT_LAYER,
    NOT_TEXT,
    PAGE,
    SECTION,
    SLIDE,
    TEXT_CUT,
)


class Unreadable(Exception):
    """The file cannot be read as its kind says; the message is the notice."""


def extract(suffix: str, data: bytes) -> tuple[str, list[str], str | None]:
    """(unit, the parts' texts, notice) of a document of extension `suffix` made of `data`.

    Raises:
        Unreadable: encrypted, damaged, or not what its extension says.
    """
    reader = _READERS.get(suffix)
    if reader is None:  # an image, audio or video: found by its name and the notes that link to it
        return "", [], None
    unit, parts = reader(data)
    notice = None
    kept, total = [], 0
    for part in parts:
        if total + len(part) > MAX_TEXT_CHARS:
            kept.append(part[:MAX_TEXT_CHARS - total])
            notice = TEXT_CUT
            break
        kept.append(part)
        total += len(part)
    if notice is None and not any(part.strip() for part in kept):
        notice = NO_TEXT_LAYER
    return unit, kept, notice


def _pdf(data: bytes) -> tuple[str, list[str]]:
    import pypdfium2

    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise Unreadable(ENCRYPTED) from exc
        raise Unreadable(DAMAGED.format(why=_pdfium_reason(exc))) from exc
    pages, total = [], 0
    try:
        for index in range(len(document)):
            page = document[index]
            try:
                textpage = page.get_textpage()
                text = textpage.get_text_range()
                textpage.close()
            finally:
                page.close()
            # PDFium ends lines with CR LF and marks a hyphen it put back as U+FFFE
            pages.append(text.replace("\r\n", "\n").replace("\r", "\n").replace("\ufffe", "-"))
            total += len(text)
            if total > MAX_TEXT_CHARS:
                break
    finally:
        document.close()
    return PAGE, pages


def _pdfium_reason(exc: Exception) -> str:
    """PDFium's own words for a file it refused (`Data format error`), without the wrapper's."""
    message = str(exc)
    start = message.find("(PDFium: ")
    return message[start + 9:message.rfind(")")].lower() if start >= 0 else message


def _docx(data: bytes) -> tuple[str, list[str]]:
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises zip, XML and its own errors for a file it cannot open
        raise Unreadable(DAMAGED.format(why=f"not a Word document: {type(exc).__name__}")) from exc
    sections: list[list[str]] = [[]]
    for paragraph in document.paragraphs:
        style = (paragraph.style.name or "") if paragraph.style is not None else ""
        if style.startswith("Heading") and any(sections[-1]):
            sections.append([])
        sections[-1].append(paragraph.text)
    for table in document.tables:
        sections[-1].extend("\t".join(cell.text for cell in row.cells) for row in table.rows)
    return SECTION, ["\n".join(lines).strip() for lines in sections]


def _pptx(data: bytes) -> tuple[str, list[str]]:
    import pptx
    from pptx.shapes.autoshape import Shape
    from pptx.shapes.graphfrm import GraphicFrame

    try:
        presentation = pptx.Presentation(io.BytesIO(data))
    except Exception as exc:  # python-pptx raises zip, XML and its own errors for a file it cannot open
        raise Unreadable(DAMAGED.format(why=f"not a PowerPoint presentation: {type(exc).__name__}")) from exc
    slides = []
    for slide in presentation.slides:
        lines = []
        for shape in slide.shapes:
            if isinstance(shape, Shape) and shape.has_text_frame:
                lines.append(shape.text_frame.text)
            if isinstance(shape, GraphicFrame) and shape.has_table:
                lines.extend("\t".join(cell.text for cell in row.cells) for row in shape.table.rows)
        if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
            lines.append(slide.notes_slide.notes_text_frame.text)
        slides.append("\n".join(line for line in lines if line.strip()))
    return SLIDE, slides


_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"


def _epub(data: bytes) -> tuple[str, list[str]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as book:
            container = ElementTree.fromstring(book.read("META-INF/container.xml"))
            rootfile = container.find(f".//{_CONTAINER}rootfile")
            if rootfile is None:
                raise Unreadable(DAMAGED.format(why="an EPUB without a package file"))
            opf_path = rootfile.get("full-path", "")
            package = ElementTree.fromstring(book.read(opf_path))
            base = posixpath.dirname(opf_path)
            hrefs = {item.get("id"): item.get("href", "") for item in package.iter(f"{_OPF}item")}
            sections = []
            for ref in package.iter(f"{_OPF}itemref"):
                href = hrefs.get(ref.get("idref"))
                if href:
                    name = posixpath.normpath(posixpath.join(base, href.split("#", 1)[0]))
                    sections.append(_html_text(book.read(name).decode("utf-8", "replace")))
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, UnicodeDecodeError) as exc:
        raise Unreadable(DAMAGED.format(why=f"not an EPUB book: {type(exc).__name__}")) from exc
    return SECTION, sections


class _TextOf(HTMLParser):
    """The text of an XHTML chapter: what its elements hold, a line for each block, scripts and styles left out."""

    _BLOCKS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "blockquote",
                         "pre", "table", "ul", "ol", "dt", "dd", "title"})
    _HIDDEN = frozenset({"script", "style", "head"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self._HIDDEN:
            self.hidden += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._HIDDEN:
            self.hidden = max(0, self.hidden - 1)
        elif tag in self._BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def _html_text(markup: str) -> str:
    parser = _TextOf()
    parser.feed(markup)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n"))
    return "\n".join(line for line in lines if line)


def _plain(data: bytes) -> tuple[str, list[str]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(NOT_TEXT) from exc
    if "\0" in text:
        raise Unreadable(NOT_TEXT)
    return "", [text]


_READERS = {".pdf": _pdf, ".docx": _docx, ".pptx": _pptx, ".epub": _epub, ".txt": _plain, ".csv": _plain}
