"""EPUB's text by the standard library: an EPUB is a zip of XHTML chapters, listed in reading order by its package
file (named in `META-INF/container.xml`)."""

from __future__ import annotations

import io
import posixpath
import zipfile
from html.parser import HTMLParser
from xml.etree import ElementTree

from nlmsync.documents.model import DAMAGED, Unreadable

_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"


def read_epub(data: bytes) -> list[str]:
    """The text of each section of the book, in its reading order.

    Raises:
        Unreadable: not an EPUB book, or a damaged one.
    """
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
    return sections


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
