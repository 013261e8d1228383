"""The text of each kind of document, part by part, from its bytes: the well-kept library for each format.

PDF: pypdfium2 (PDFium, Chrome's reader); Word: python-docx; PowerPoint: python-pptx; EPUB: the standard library
(`documents.epub`). Each library is imported with the first file of its format, so a reading process that reads
PDFs only starts with PDFium alone. These run in the reading process (`documents.worker`), never in nlmsync's own:
a damaged or crafted file may take any time or memory there.
"""

from __future__ import annotations

import io

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
    Unreadable,
)


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


def _epub(data: bytes) -> tuple[str, list[str]]:
    from nlmsync.documents.epub import read_epub

    return SECTION, read_epub(data)


def _plain(data: bytes) -> tuple[str, list[str]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise Unreadable(NOT_TEXT) from exc
    if "\0" in text:
        raise Unreadable(NOT_TEXT)
    return "", [text]


_READERS = {".pdf": _pdf, ".docx": _docx, ".pptx": _pptx, ".epub": _epub, ".txt": _plain, ".csv": _plain}
