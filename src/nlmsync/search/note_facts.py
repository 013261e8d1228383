"""What the index knows of a note besides its terms (`store.index_codec.NoteFacts`): the language it is written
in, and the keys it shares with its copies in other languages — so that a selection takes one copy of a page, in
the question's language (`search.selection`).

A vault shows translations three ways, and each gives a key:

- the same file name in parallel language folders (`pages/common/tar.md`, `pages.cs/common/tar.md`; `en/x.md`,
  `de/x.md`): the path with its language folders' codes taken out (`path_page`, computed from the path when a
  selection needs it, since the vault's languages say which folders are language folders: a code no note is
  written in names no language folder);
- a front-matter key that names the page whatever its language (`permalink`, `translationKey`): `fm:VALUE`;
- the same fenced code blocks and embedded images (`code:HASH`), when they say enough to tell a page by (at least
  `MIN_SHARED_CHARS` characters); only notes in different languages are copies by it, since two notes in one
  language may well quote the same code.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import xxhash

from nlmsync.store.index_codec import NoteFacts
from nlmsync.text import FrontMatter, text_language

__all__ = ["CODE_KEY", "FRONT_MATTER_KEYS", "MIN_SHARED_CHARS", "note_facts", "path_page"]

FRONT_MATTER_KEYS = ("permalink", "translationKey", "translation_key")
"""Front-matter keys whose value names a page in every language it is written in."""
MIN_SHARED_CHARS = 40
"""The fenced code and image names a note must hold for them to tell its copies by."""
CODE_KEY = "code:"
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1", re.DOTALL | re.MULTILINE)
_IMAGE = re.compile(r"!\[\[([^\]|#\n]+)|!\[[^\]\n]*\]\(([^)\s]+)")
# A folder named by a language's code, alone or after a dot (`de`, `pt-br`, `zh_TW`, `pages.ko`, `pages.pt_BR`)
_LANGUAGE_FOLDER = re.compile(r"(?:(.+)\.)?([a-z]{2,3})(?:[-_][A-Za-z]{2,4})?")


def note_facts(text: str, front: FrontMatter) -> NoteFacts:
    """A note's facts from its text and its front matter."""
    pages = [f"fm:{value.strip()}" for key in FRONT_MATTER_KEYS
             if isinstance(value := front.data.get(key), str) and value.strip()]
    shared = [found.group(2) for found in _FENCED.finditer(text, front.body_start)]
    shared += [found.group(1) or found.group(2) for found in _IMAGE.finditer(text, front.body_start)]
    if sum(map(len, shared)) >= MIN_SHARED_CHARS:
        pages.append(CODE_KEY + xxhash.xxh3_64_hexdigest("\0".join(shared).encode("utf-8", "surrogatepass")))
    return NoteFacts(text_language(text), tuple(pages))


def path_page(path: str, languages: Collection[str]) -> str:
    """The key a note's path shares with its copies in parallel language folders: the path with the code of each
    folder named by one of `languages` taken out (`pages.cs/common/tar.md` → `pages/common/tar.md`, the path of
    its English copy; `de/Plugins/x.md` → `Plugins/x.md`)."""
    folders = path.split("/")
    name = folders.pop()
    kept: list[str] = []
    for folder in folders:
        match = _LANGUAGE_FOLDER.fullmatch(folder)
        if match is None or match.group(2) not in languages:
            kept.append(folder)
        elif match.group(1):
            kept.append(match.group(1))
    return "/".join([*kept, name])
