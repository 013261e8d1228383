"""What reading an attachment gives: its text by page (slide, section), or why there is none, and the limits.

A `DocumentText` is a fact about some bytes: it is cached by the xxh3-128 of the file's bytes (`TextCache`), so a
file whose bytes did not change is never read again, whatever its path or modification time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

MAX_FILE_BYTES = 200 * 1024 * 1024
"""NotebookLM's limit on one uploaded file: a larger attachment is not read, and cannot be a source."""
MAX_SOURCE_WORDS = 500_000
"""NotebookLM's limit on the words of one source."""
MAX_TEXT_CHARS = 32 * 1024 * 1024
"""Characters of text kept of one file: past this (far beyond what a source holds) the rest is left out."""
READ_SECONDS = 120.0
"""Time one file's text may take to read, in a reading process apart from nlmsync's; past it that process is stopped."""
READ_MEMORY_BYTES = 1024 * 1024 * 1024
"""Address space each reading process may take (where the system can bound it): a file whose reading needs more
stops it."""

PAGE, SLIDE, SECTION = "page", "slide", "section"
"""What a document's parts are: a PDF's pages, a presentation's slides, a Word file's or an EPUB's sections (a
text file is one part, with no name)."""
UNIT_OF_SUFFIX = {".pdf": PAGE, ".pptx": SLIDE, ".docx": SECTION, ".epub": SECTION}
"""The parts a document of each extension is read in."""

# The notices: why a file has no text, or only part of it. Each is one line, said with the file's path.
ENCRYPTED = "encrypted PDF: its text cannot be read without the password"
NO_TEXT_LAYER = "no text layer (a scanned document or images only): found by its name and the notes linking to it"
TOO_LARGE = "over NotebookLM's 200 MB limit for a file"
CHANGED_WHILE_READ = "changed while it was read: read again on the next run"
TIMED_OUT = "took longer than {seconds:g} s to read: stopped (a document crafted or damaged to be expensive?)"
OUT_OF_MEMORY = "needed more memory than {mib} MiB to read: stopped (a document crafted or damaged to be expensive?)"
CRASHED = "the reader stopped on it ({why}): damaged or crafted?"
DAMAGED = "cannot be read ({why})"
NOT_TEXT = "not UTF-8 text"
TEXT_CUT = "more text than 32 MiB: the rest is left out"
OVER_WORDS = ("{words:,} words, over the {limit:,} one source holds: uploaded as its text, by pages, in parts titled "
              "as a long note's")


class Unreadable(Exception):
    """The file cannot be read as its kind says (raised in the reading process); the message is the notice."""


_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class DocumentText:
    """The text of one attachment's bytes, part by part (`unit`: page, slide, section, or "" for a text file),
    and the notice that says why the text is missing or partial (None: read whole)."""

    content_hash: str
    """xxh3-128 (hex) of the file's bytes; "" when the file was not read (over the size limit)."""
    unit: str = ""
    pages: tuple[str, ...] = ()
    notice: str | None = None
    cacheable: bool = True
    """False for a reading that says nothing lasting about the bytes (the file changed while it was read)."""

    @property
    def text(self) -> str:
        """The parts' texts, a blank line between two."""
        return "\n\n".join(self.pages)

    @property
    def marked_text(self) -> str:
        """The parts' texts, each under a line naming it (`[page 7]`): what a reader who cites pages is given."""
        if not self.unit:
            return self.text
        return "\n\n".join(f"[{self.unit} {number}]\n{page}" for number, page in enumerate(self.pages, start=1))

    @property
    def has_text(self) -> bool:
        return any(page.strip() for page in self.pages)

    @property
    def words(self) -> int:
        return sum(len(page.split()) for page in self.pages)

    def locate(self, quote: str) -> int | None:
        """The number (from 1) of the part where `quote`'s words begin (its first twelve, compared word for word
        without case or punctuation, within a part or running on into the next); None when they are not found."""
        wanted = _WORD.findall(quote.lower())[:12]
        if not wanted:
            return None
        words: list[str] = []
        starts: list[int] = []  # the index in `words` where each part begins
        for page in self.pages:
            starts.append(len(words))
            words.extend(_WORD.findall(page.lower()))
        first, size = wanted[0], len(wanted)
        for at in (i for i, word in enumerate(words) if word == first):
            if words[at:at + size] == wanted:
                return max(n for n, start in enumerate(starts, start=1) if start <= at)
        return None


class TextCache(Protocol):
    """Where texts already read are kept, by the hash of the bytes they were read from, and what each attachment
    of the vault hashed to, by its file's modification time and size (the state file's)."""

    def get(self, content_hash: str) -> DocumentText | None: ...

    def put(self, document: DocumentText) -> None: ...

    def hash_of(self, path: str, mtime_ns: int, size: int) -> str | None: ...

    def record(self, path: str, mtime_ns: int, size: int, content_hash: str, has_text: bool) -> None: ...
