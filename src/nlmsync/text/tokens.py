"""The tokenizer: normalization and tokens of a text, for notes, passages and queries alike.

1. NFKC + lowercase.  2. Base tokens `[\\p{L}\\p{N}]+`.  3. Lengths 1..80.
4. Adjacent ASCII compound tokens (`heap` + `sort` -> `heapsort`), of words one word may have been split
   into: only white space, or one joining mark alone (`JOINING_MARKS`: `heap-sort`, `heap_sort`, `node.js`,
   `tcp/ip`, `don't`, `mc^2`), stands between them. Any other separator (a comma, a colon, a bracket, a backtick,
   `://`, `. ` at a sentence's end) ends a phrase: the words either side of it form no compound, nor do the
   words either side of one left out by rule 3.
5. CJK / Hangul bigrams.  (6. A vault path's tokens, `.md` removed and separators split, are search's:
`search.tokenize`.)

Why rule 4 looks at the separator: the compounds are for words written split or merged (`heap sort` finds
`heapsort` and the other way round) and, at a quarter of a word's weight in a query, a bonus for two words
side by side. Across punctuation they are neither (`informationhttps` of "More information: https://",
`pathto` of `{{path/to/file}}`, a list item's last word and the next item's first): terms no query means,
which would fill the vocabulary (`benchmarks/known_items.py` measures what the rule does to relevance).

CJK runs include the marks that belong to Japanese words though Unicode puts them in the
Common script: the prolonged sound mark `ー` and the iteration mark `々`, so `ヒープソート`
yields `ヒー ープ プソ ソー ート`. Bigrams come from every base token, also one longer than
80 characters (unspaced Japanese sentences easily are).

How: every rule reads a text through its code points' classes (`class_bits`: a word's character, white space,
a joining mark, a CJK run's character), found once per code point by the patterns below and kept in a table.
A text's words are its runs of word characters (the text with every other code point made a space, split), what
stands between two words is told by its classes, and a CJK run is a run of CJK characters. One text is read so
with `str.translate` (no regex runs over it), or, ASCII text, split at once by its word class written as a
pattern of the standard library's engine (an ASCII text never imports `regex`); many texts at once, the notes
of a full build, with numpy, by the same classes (`text.fold`). `count_tokens` counts the tokens of a text given
in pieces (`text_pieces`), for notes of many megabytes.
"""

from __future__ import annotations

import functools
import operator
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import compress
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import regex

MIN_TOKEN_LENGTH = 1
MAX_TOKEN_LENGTH = 80
PIECE_CHARS = 1 << 16  # `text_pieces`: characters tokenized at once when a large text is counted

# Rule 4: the marks that, alone between two words, still join them (hyphen, underscore, apostrophes, full stop,
# slash, and the caret of formula text: `mc^2` is `mc²`); white space of any length joins them too.
JOINING_MARKS = frozenset("-_'./^\u2019")
_CJK_CLASS = r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\u3005\u3006]"

# A code point's classes, as bits: white space, a word's character (`[\p{L}\p{N}]`), a joining mark, a CJK run's
# character (CJK and a word's character: a CJK symbol such as a radical ends a run)
SPACE, WORD, MARK, CJK = 1, 2, 4, 8


class _UnicodePatterns(NamedTuple):
    word_character: regex.Pattern[str]
    cjk_character: regex.Pattern[str]


@functools.cache
def _unicode() -> _UnicodePatterns:
    """The patterns that say which code points beyond ASCII are a word's characters and a CJK run's, compiled on
    first use (ASCII's letters and digits are exactly its `\\p{L}` and `\\p{N}`, and none of it is CJK)."""
    import regex

    return _UnicodePatterns(regex.compile(r"[\p{L}\p{N}]+"),
                            regex.compile(rf"(?V1)[{_CJK_CLASS}&&[\p{{L}}\p{{N}}]]+"))


def word_character_runs(stop: int, start: int = 0, *, cjk: bool = False) -> list[tuple[int, int]]:
    """The runs [first, last + 1) of code points in [start, stop) that base tokens are made of (`[\\p{L}\\p{N}]`,
    as the pattern decides), or with `cjk`, that CJK runs are made of (rule 5)."""
    chars = "".join(map(chr, range(start, stop)))
    pattern = _unicode().cjk_character if cjk else _unicode().word_character
    return [(start + run.start(), start + run.end()) for run in pattern.finditer(chars)]


def word_characters(chars: str, *, cjk: bool = False) -> list[int]:
    """The positions of the characters of `chars` that base tokens are made of (`[\\p{L}\\p{N}]`, as the pattern
    decides), or with `cjk`, that CJK runs are made of (rule 5)."""
    pattern = _unicode().cjk_character if cjk else _unicode().word_character
    return [position for run in pattern.finditer(chars) for position in range(run.start(), run.end())]


def class_bits(char: str) -> int:
    """The classes of one code point (`SPACE`, `WORD`, `MARK`, `CJK`), by the patterns."""
    if char.isascii():
        return (WORD if char.isalnum() else 0) | (SPACE if char.isspace() else 0) | (MARK if char in JOINING_MARKS
                                                                                     else 0)
    return ((WORD if word_characters(char) else 0) | (CJK if word_characters(char, cjk=True) else 0)
            | (SPACE if char.isspace() else 0) | (MARK if char in JOINING_MARKS else 0))


# A code point's classes as the letter `str.translate` makes of it: a CJK run's character, another word's
# character, white space, a joining mark, anything else
_CJK_LETTER, _WORD_LETTER, _SPACE_LETTER, _MARK_LETTER, _OTHER_LETTER = "c", "w", " ", "m", "."
_WORD_RUN = re.compile("[cw]+")
_CJK_RUN = re.compile("c{2,}")


def _letter(bits: int) -> str:
    if bits & CJK:
        return _CJK_LETTER
    if bits & WORD:
        return _WORD_LETTER
    return _SPACE_LETTER if bits & SPACE else _MARK_LETTER if bits & MARK else _OTHER_LETTER


class _Letters(dict[int, str]):
    """`str.translate`'s table of each code point's class letter, filled as code points are met (ASCII's from the
    start): a dictionary lookup a character, in C."""

    def __missing__(self, code: int) -> str:
        letter = self[code] = _letter(class_bits(chr(code)))
        return letter


class _Spaced(dict[int, str]):
    """`str.translate`'s table that keeps a word's characters and makes every other code point a space."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        kept = self[code] = char if class_bits(char) & WORD else " "
        return kept


_LETTERS = _Letters({code: _letter(class_bits(chr(code))) for code in range(0x80)})
_SPACED = _Spaced({code: chr(code) if class_bits(chr(code)) & WORD else " " for code in range(0x80)})
# ASCII text, split by the standard library's engine into its words and what stands between them at once: the
# class of ASCII's word characters, as a pattern (most notes, passages and queries are ASCII)
_ASCII_WORD_SPLIT = re.compile("([" + "".join(re.escape(chr(code)) for code in range(0x80)
                                              if class_bits(chr(code)) & WORD) + "]+)")


class _KnownGaps(dict[str, bool]):
    """Whether a gap joins two words (`gap_joins`), for the gaps met so far (a text's are mostly a few: a space, a
    line break), up to `_KNOWN_GAPS` of them: one dictionary lookup a gap, no call. `text`: the gaps are text (of
    an ASCII text), else their class letters."""

    def __init__(self, text: bool) -> None:
        super().__init__()
        self.text = text

    def __missing__(self, gap: str) -> bool:
        joins = gap_joins(gap.translate(_LETTERS) if self.text else gap)
        if len(self) < _KNOWN_GAPS:
            self[gap] = joins
        return joins


_KNOWN_GAPS = 4096
_TEXT_GAPS_JOIN = _KnownGaps(text=True)
_LETTER_GAPS_JOIN = _KnownGaps(text=False)


def normalize(text: str) -> str:
    """NFKC then lowercase (rule 1)."""
    if text.isascii():  # NFKC leaves ASCII as it is
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


def tokenize(text: str) -> list[str]:
    """All tokens of `text`: base tokens in order, then compounds and CJK bigrams (rules 1-5)."""
    return tokens_and_words(text)[0]


def tokens_and_words(text: str) -> tuple[list[str], int]:
    """`tokenize(text)` and how many of its tokens are words (base tokens): the length BM25 gives a note's
    body counts its words, not the compounds and CJK bigrams made from them, which repeat the same text."""
    normalized = normalize(text)
    scan = _scan(normalized)
    base, joins = _rule_3(scan.words, scan.joins)
    tokens = base + compound_tokens(base, joins, normalized.isascii())
    tokens += scan.bigrams
    return tokens, len(base)


def base_tokens(normalized: str) -> list[str]:
    """Rules 2-3 on normalized text: the `[\\p{L}\\p{N}]+` runs 1..80 long (the base tokens)."""
    raw = words(normalized)
    if len(normalized) <= MAX_TOKEN_LENGTH or max(map(len, raw), default=0) <= MAX_TOKEN_LENGTH:
        return raw  # no token is too long
    return [t for t in raw if len(t) <= MAX_TOKEN_LENGTH]


def words(normalized: str) -> list[str]:
    """Rule 2 alone: every `[\\p{L}\\p{N}]+` run of normalized text, of any length (a query's CJK words)."""
    if normalized.isascii():
        return _ASCII_WORD_SPLIT.split(normalized)[1::2]
    return normalized.translate(_SPACED).split()


def base_tokens_and_joins(normalized: str) -> tuple[list[str], list[bool]]:
    """`base_tokens(normalized)`, and per token whether it forms a compound with the one before it (rule 4): only
    white space or one of `JOINING_MARKS` stands between them, and no word rule 3 left out."""
    return _rule_3(*words_and_joins(normalized))


def words_and_joins(normalized: str) -> tuple[list[str], list[bool]]:
    """`words(normalized)`, of any length, and per word whether what separates it from the word before is white
    space only or one joining mark alone (the first word: False)."""
    scan = _scan(normalized)
    return scan.words, scan.joins


def words_and_gaps(normalized: str) -> tuple[list[str], list[str]]:
    """`words(normalized)` and what stands around them as its class letters (`gap_joins` reads them): before the
    first word, between each two, after the last (the whole text when it has no word). A gap is as long as the
    text it stands for."""
    if normalized.isascii():
        parts = _ASCII_WORD_SPLIT.split(normalized)
        return parts[1::2], [gap.translate(_LETTERS) for gap in parts[0::2]]
    return normalized.translate(_SPACED).split(), _WORD_RUN.split(normalized.translate(_LETTERS))


def gap_joins(gap: str) -> bool:
    """Rule 4: whether two words with this gap between them (class letters, `words_and_gaps`) may be one word
    split: white space only, or one joining mark alone."""
    return gap == _MARK_LETTER or not gap.strip()


class _Scan(NamedTuple):
    """A normalized text read by its classes: its words (of any length), per word whether the gap before it joins
    it to the word before (rule 4; the first word: False), the class letters of the text before the first word
    and after the last (the whole text, twice, when it has no word; asked for with `gaps`), and its CJK bigrams."""

    words: list[str]
    joins: list[bool]
    first_gap: str
    last_gap: str
    bigrams: list[str]


def _scan(normalized: str, gaps: bool = False) -> _Scan:
    """Read `normalized` by its classes: an ASCII text split by its word class at once, any other through its
    class letters."""
    if normalized.isascii():  # no CJK run
        parts = _ASCII_WORD_SPLIT.split(normalized)
        found = parts[1::2]
        joins = [False, *map(_TEXT_GAPS_JOIN.__getitem__, parts[2:-1:2])] if found else []
        if not gaps:
            return _Scan(found, joins, "", "", [])
        return _Scan(found, joins, parts[0].translate(_LETTERS), parts[-1].translate(_LETTERS), [])
    letters = normalized.translate(_LETTERS)
    around = _WORD_RUN.split(letters)
    found = normalized.translate(_SPACED).split()
    joins = [False, *map(_LETTER_GAPS_JOIN.__getitem__, around[1:-1])] if found else []
    return _Scan(found, joins, around[0], around[-1], _bigrams(normalized, letters))


def _rule_3(raw: list[str], joins: list[bool]) -> tuple[list[str], list[bool]]:
    """Words and their joins (`words_and_joins`) without the words longer than `MAX_TOKEN_LENGTH`; the word after
    one left out joins nothing."""
    if max(map(len, raw), default=0) <= MAX_TOKEN_LENGTH:
        return raw, joins
    kept = [len(token) <= MAX_TOKEN_LENGTH for token in raw]
    joins = [join and before for join, before in zip(joins, [False, *kept])]
    return list(compress(raw, kept)), list(compress(joins, kept))


def compound_tokens(base: list[str], joins: list[bool], ascii_text: bool = False) -> list[str]:
    """Rule 4: each pair of adjacent ASCII base tokens joined (`heap` + `sort` -> `heapsort`), at most 80 long,
    where the second joins the first (`joins`, of `base_tokens_and_joins`). `ascii_text`: the tokens are known to
    be ASCII (they come from ASCII text).

    Built by `map` over the pairs rather than a loop: a full build makes millions of them."""
    selectors: Iterable[bool] = joins[1:]
    if not ascii_text and not all(map(str.isascii, base)):
        is_ascii = list(map(str.isascii, base))
        selectors = map(operator.and_, map(operator.and_, is_ascii, is_ascii[1:]), selectors)
    compounds: Iterator[str] = compress(map(operator.add, base, base[1:]), selectors)
    if max(map(len, base), default=0) <= MAX_TOKEN_LENGTH // 2:  # no pair can be too long
        return list(compounds)
    return [token for token in compounds if len(token) <= MAX_TOKEN_LENGTH]


def cjk_bigrams(normalized: str) -> list[str]:
    """Rule 5 on normalized text: the overlapping two-character pieces of every CJK/Hangul run of its base
    tokens (of any length), in text order."""
    if normalized.isascii():
        return []
    return _bigrams(normalized, normalized.translate(_LETTERS))


def _bigrams(normalized: str, letters: str) -> list[str]:
    """`cjk_bigrams` of a text whose class letters are `letters`."""
    if _CJK_LETTER not in letters:
        return []
    return [normalized[i:i + 2] for run in _CJK_RUN.finditer(letters) for i in range(run.start(), run.end() - 1)]


def count_tokens(pieces: Iterable[str]) -> Counter[str]:
    """`Counter(tokenize("".join(pieces)))` without ever holding every token of the text at once: what a
    note of many megabytes is counted with (its tokens as a list would take many times its size).

    Each piece must end where the text may be cut without changing a token: after white space (a space,
    tab or line break; `text_pieces` cuts so). A compound made across a cut (rule 4) is counted too.
    Consecutive small pieces (a note's sections) are tokenized together, up to `PIECE_CHARS` at a time."""
    return count_tokens_and_words(pieces)[0]


def count_tokens_and_words(pieces: Iterable[str]) -> tuple[Counter[str], int]:
    """`count_tokens(pieces)` and how many of the tokens are words (as `tokens_and_words`)."""
    counts: Counter[str] = Counter()
    word_count = 0
    previous = ""  # the last word so far (of any length), for the compound it makes with the next one
    gap = ""  # the class letters since that word: with the next piece's first gap, what stands between the two
    for piece in _joined(pieces, PIECE_CHARS):
        scan = _scan(normalize(piece), gaps=True)
        raw = scan.words
        tokens = scan.bigrams
        if not raw:
            gap += scan.first_gap
        else:
            base, joins = _rule_3(raw, scan.joins)
            first = raw[0]
            if (previous and len(previous) <= MAX_TOKEN_LENGTH and len(first) <= MAX_TOKEN_LENGTH
                    and gap_joins(gap + scan.first_gap)):
                tokens += compound_tokens([previous, first], [False, True])
            tokens += base + compound_tokens(base, joins)
            previous, gap = raw[-1], scan.last_gap
            word_count += len(base)
        counts.update(tokens)
    return counts, word_count


def _joined(pieces: Iterable[str], size: int) -> Iterator[str]:
    """`pieces` joined in order into strings of at least `size` characters (the last one may be shorter)."""
    batch: list[str] = []
    length = 0
    for piece in pieces:
        batch.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(batch)
            batch, length = [], 0
    if batch:
        yield "".join(batch)


def text_pieces(text: str, start: int = 0, end: int | None = None, size: int = PIECE_CHARS) -> Iterator[str]:
    """`text[start:end]` in pieces of about `size` characters for `count_tokens`, each cut just after white
    space (a piece grows past `size` only while no white space comes)."""
    end = len(text) if end is None else end
    while start < end:
        stop = start + size
        if stop >= end:
            yield text[start:end]
            return
        cut = max(text.rfind(" ", start, stop), text.rfind("\n", start, stop), text.rfind("\t", start, stop),
                  text.rfind("\r", start, stop))
        if cut < 0:  # no white space in this stretch: up to the next one
            found = [i for i in (text.find(c, stop, end) for c in " \n\t\r") if i >= 0]
            cut = min(found) if found else end - 1
        yield text[start:cut + 1]
        start = cut + 1
