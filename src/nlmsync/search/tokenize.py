"""The tokens search counts: a text's (rules 1-5, the text package's tokenizer: `nlmsync.text`) and a vault
path's (rule 6: `.md` removed, the path split at its separators, each part tokenized on its own, so no compound
joins two parts), and the version of the whole, which the index's cache records.
"""

from __future__ import annotations

import functools
import re

from nlmsync.text import normalize
from nlmsync.text import tokenize as text_tokens
from nlmsync.vault import NOTE_SUFFIX, has_note_suffix

# 3: the body's length in words, the file name's weight shared by its words, no title heading
# 4: compounds only across white space or one joining mark (rule 4); a file name counts at least one token in
#    the path's length (`markdown.name_length`)
TOKENIZER_VERSION = 4

_PATH_SEPARATORS = re.compile(r"[/\\]+")


def tokenize(text: str) -> list[str]:
    """All tokens of `text` as the index counts them: base tokens in order, then compounds and CJK bigrams."""
    return text_tokens(text)


def path_texts(path: str) -> list[str]:
    """The normalized texts of a vault path's parts (rule 6), which `tokenize` each: no compound joins two parts."""
    return list(map(normalize, _path_parts(path)))


def tokenize_path(path: str) -> list[str]:
    """Tokens of a vault path: `.md` removed, separators split, then `tokenize` per part (rule 6)."""
    tokens: list[str] = []
    for part in _path_parts(path):
        tokens.extend(text_tokens(part))
    return tokens


def _path_parts(path: str) -> list[str]:
    """Rule 6: the parts of a vault path, `.md` removed, split at its separators."""
    stem = path[:-len(NOTE_SUFFIX)] if has_note_suffix(path) else path
    return [part for part in _PATH_SEPARATORS.split(stem) if part]


@functools.lru_cache(maxsize=4096)
def folder_tokens(folder: str) -> tuple[str, ...]:
    """`tokenize_path` of a folder, kept for the next note in it (a vault's notes share few folders)."""
    return tuple(tokenize_path(folder))
