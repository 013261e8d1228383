"""Tokenization and normalization (spec §3.1).

1. NFKC + lowercase.  2. Base tokens `[\\p{L}\\p{N}]+`.  3. Lengths 1..80.
4. Adjacent ASCII compound tokens (`heap` + `sort` -> `heapsort`).
5. CJK / Hangul bigrams.  6. Path tokens: `.md` removed, separators split.

CJK runs include the marks that belong to Japanese words though Unicode puts them in the
Common script: the prolonged sound mark `ー` and the iteration mark `々`, so `ヒープソート`
yields `ヒー ープ プソ ソー ート`. Bigrams come from every base token, also one longer than
80 characters (unspaced Japanese sentences easily are).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from itertools import pairwise
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import regex

MIN_TOKEN_LENGTH = 1
MAX_TOKEN_LENGTH = 80
TOKENIZER_VERSION = 2

# Base tokens of ASCII text (the letters and digits of ASCII are exactly its \p{L} and \p{N}), with the
# standard library's engine: faster, and a process that only meets ASCII never imports `regex` (~15 ms).
_ASCII_BASE_TOKEN = re.compile(r"[A-Za-z0-9]+")
_PATH_SEPARATORS = re.compile(r"[/\\]+")
_CJK_CLASS = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006]"


class _UnicodePatterns(NamedTuple):
    base_token: regex.Pattern[str]
    cjk_char: regex.Pattern[str]
    cjk_run: regex.Pattern[str]


@functools.cache
def _unicode() -> _UnicodePatterns:
    """The `regex` patterns for text beyond ASCII, compiled on first use."""
    import regex

    return _UnicodePatterns(regex.compile(r"[\p{L}\p{N}]+"), regex.compile(_CJK_CLASS),
                            regex.compile(_CJK_CLASS + "{2,}"))


def normalize(text: str) -> str:
    """NFKC then lowercase (rule 1)."""
    if text.isascii():  # NFKC leaves ASCII as it is
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """All tokens of `text`: base tokens in order, then compounds and CJK bigrams (rules 1-5)."""
    normalized = normalize(text)
    raw, base = base_tokens(normalized)
    tokens = base + compound_tokens(base)
    if not normalized.isascii():
        tokens.extend(cjk_bigrams(raw))
    return tokens


def base_tokens(normalized: str) -> tuple[list[str], list[str]]:
    """Rules 2-3 on normalized text: every `[\\p{L}\\p{N}]+` run, and those of them 1..80 long (the base tokens)."""
    raw = (_ASCII_BASE_TOKEN if normalized.isascii() else _unicode().base_token).findall(normalized)
    if len(normalized) <= MAX_TOKEN_LENGTH or max(map(len, raw), default=0) <= MAX_TOKEN_LENGTH:
        return raw, raw[:]  # no token is too long
    return raw, [t for t in raw if len(t) <= MAX_TOKEN_LENGTH]


def compound_tokens(base: list[str]) -> list[str]:
    """Rule 4: each pair of adjacent ASCII base tokens joined (`heap` + `sort` -> `heapsort`), at most 80 long."""
    return [left + right for left, right in pairwise(base)
            if left.isascii() and right.isascii() and len(left) + len(right) <= MAX_TOKEN_LENGTH]


def cjk_bigrams(raw: list[str]) -> list[str]:
    """Rule 5: the overlapping two-character pieces of every CJK/Hangul run, from tokens of any length."""
    bigrams: list[str] = []
    patterns = None
    for token in raw:
        if token.isascii():
            continue
        patterns = patterns or _unicode()
        if patterns.cjk_char.search(token) is None:
            continue
        for run in patterns.cjk_run.findall(token):
            bigrams.extend(run[i:i + 2] for i in range(len(run) - 1))
    return bigrams


def tokenize_path(path: str) -> list[str]:
    """Tokens of a vault path: `.md` removed, separators split, then `tokenize` per part (rule 6)."""
    stem = path[:-3] if path.lower().endswith(".md") else path
    tokens: list[str] = []
    for part in _PATH_SEPARATORS.split(stem):
        if part:
            tokens.extend(tokenize(part))
    return tokens
