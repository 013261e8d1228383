"""The text of the vault's attachments (PDF, Word, PowerPoint, EPUB, text files), part by part, for search, reading
and sync alike: `DocumentReader` reads a file once per content (its text cached by the hash of its bytes,
`TextCache`), in a process of its own bounded in time and memory, and says in one line why a file has no text.

The names below are the package's public surface, imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.documents.model import (
        MAX_FILE_BYTES,
        MAX_SOURCE_WORDS,
        NO_TEXT_LAYER,
        PAGE,
        SECTION,
        SLIDE,
        UNIT_OF_SUFFIX,
        DocumentText,
        TextCache,
    )
    from nlmsync.documents.reader import DocumentReader, hash_file

_EXPORTS = {
    "MAX_FILE_BYTES": "nlmsync.documents.model",
    "MAX_SOURCE_WORDS": "nlmsync.documents.model",
    "NO_TEXT_LAYER": "nlmsync.documents.model",
    "PAGE": "nlmsync.documents.model",
    "SECTION": "nlmsync.documents.model",
    "SLIDE": "nlmsync.documents.model",
    "UNIT_OF_SUFFIX": "nlmsync.documents.model",
    "DocumentText": "nlmsync.documents.model",
    "TextCache": "nlmsync.documents.model",
    "DocumentReader": "nlmsync.documents.reader",
    "hash_file": "nlmsync.documents.reader",
}
__all__ = [
    "MAX_FILE_BYTES",
    "MAX_SOURCE_WORDS",
    "NO_TEXT_LAYER",
    "PAGE",
    "SECTION",
    "SLIDE",
    "UNIT_OF_SUFFIX",
    "DocumentReader",
    "DocumentText",
    "TextCache",
    "hash_file",
]
__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
