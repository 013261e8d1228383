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

import functools
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping

import xxhash

from nlmsync.store.index_codec import NoteFacts
from nlmsync.text import FrontMatter, text_language

__all__ = ["AGREE", "CODE_KEY", "FRONT_MATTER_KEYS", "MIN_SHARED_CHARS", "MIN_TOLD", "TELL_EVERY", "facts_of",
           "folder_codes", "note_facts", "path_page", "presumed_languages"]

FRONT_MATTER_KEYS = ("permalink", "translationKey", "translation_key")
"""Front-matter keys whose value names a page in every language it is written in."""
MIN_SHARED_CHARS = 40
"""The fenced code and image names a note must hold for them to tell its copies by."""
CODE_KEY = "code:"
_FENCED = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1", re.DOTALL | re.MULTILINE)
_IMAGE = re.compile(r"!\[\[([^\]|#\n]+)|!\[[^\]\n]*\]\(([^)\s]+)")
# A folder named by a language's code, alone or after a dot (`de`, `pt-br`, `zh_TW`, `pages.ko`, `pages.pt_BR`)
_LANGUAGE_FOLDER = re.compile(r"(?:(.+)\.)?([a-z]{2,3})(?:[-_][A-Za-z]{2,4})?")


TELL_EVERY = 32
"""Of the notes a sync reads, one in this many is told by the language model when the sync reads many."""
MIN_TOLD = 4
"""The notes told under a folder for its language to be presumed of the rest."""
AGREE = 0.8
"""The share of the notes told under a folder that must be in one language for it to be the folder's."""


def note_facts(text: str, front: FrontMatter, tell: bool = True) -> NoteFacts:
    """A note's facts from its text and its front matter; its language only when `tell` ("" otherwise)."""
    pages = [f"fm:{value.strip()}" for key in FRONT_MATTER_KEYS
             if isinstance(value := front.data.get(key), str) and value.strip()] if front.data else []
    shared = [found.group(2) for found in _FENCED.finditer(text, front.body_start)] if (
        "```" in text or "~~~" in text) else []
    if "![" in text:
        shared += [found.group(1) or found.group(2) for found in _IMAGE.finditer(text, front.body_start)]
    if shared and sum(map(len, shared)) >= MIN_SHARED_CHARS:
        pages.append(CODE_KEY + xxhash.xxh3_64_hexdigest("\0".join(shared).encode("utf-8", "surrogatepass")))
    return facts_of(text_language(text) if tell else "", tuple(pages))


def facts_of(lang: str, pages: tuple[str, ...] = ()) -> NoteFacts:
    """The facts of a note in `lang` whose copies share `pages`: one object for every note of a language with no
    such keys (most of a vault's notes)."""
    return NoteFacts(lang, pages) if pages else _plain(lang)


@functools.cache
def _plain(lang: str) -> NoteFacts:
    return NoteFacts(lang)


def presumed_languages(paths: Iterable[str], told: Mapping[str, str]) -> dict[str, str]:
    """The languages of `paths` presumed from the notes `told` (path → language told): a note's language is that of
    the nearest folder above it (its own first, the vault's last) under which at least `MIN_TOLD` notes were told,
    when at least `AGREE` of them are in one language. A note whose nearest such folder is of mixed languages, or
    which has none, is left out: it is to be told."""
    counts: dict[str, Counter[str]] = {}
    for path, lang in told.items():
        if lang:
            for folder in _folders_above(path):
                counts.setdefault(folder, Counter())[lang] += 1
    said: dict[str, str | None] = {}  # a folder with enough notes told: its language, None when they disagree
    for folder, langs in counts.items():
        if langs.total() >= MIN_TOLD:
            most, count = langs.most_common(1)[0]
            said[folder] = most if count >= AGREE * langs.total() else None
    of_folder: dict[str, str | None] = {}
    presumed: dict[str, str] = {}
    for path in paths:
        folder = path.rpartition("/")[0]
        if folder not in of_folder:
            of_folder[folder] = next((said[above] for above in _folders_above(path) if above in said), None)
        if (found := of_folder[folder]) is not None:
            presumed[path] = found
    return presumed


def _folders_above(path: str) -> Iterator[str]:
    """The folders above a vault path, nearest first, the vault's ("") last."""
    while path:
        path = path.rpartition("/")[0]
        yield path


def folder_codes(paths: Iterable[str], languages: Collection[str]) -> set[str]:
    """The codes of language folders among the folders of `paths`, for `path_page`: the `languages` the vault's
    notes are written in, and the code of a folder named `<name>.<code>` beside one named `<name>.<other>` whose
    code is one of them (a family of language folders: "pages.uz" beside "pages.cs", whatever language its notes
    are told to be in)."""
    families: dict[str, set[str]] = {}  # a folder's path with its code taken out → the codes found
    for path in paths:
        folders = path.split("/")[:-1]
        for i, folder in enumerate(folders):
            match = _LANGUAGE_FOLDER.fullmatch(folder)
            if match is not None and match.group(1):
                families.setdefault("/".join([*folders[:i], match.group(1)]), set()).add(match.group(2))
    codes = set(languages)
    for found in families.values():
        if not found.isdisjoint(languages):
            codes |= found
    return codes


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
