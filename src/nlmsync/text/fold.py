"""Many texts split into tokens at once, by their code points (the notes of a full build, or the few of a sync):
each code point classed by table (word character, white space, joining mark, CJK), then, with numpy, the words
of all the texts (one `str.split` of the texts with every other code point made a space), which adjacent words
rule 4 joins, and the CJK bigrams (rule 5) as pairs of code points.

The classes are the tokenizer's (`tokens.class_bits`: `[\\p{L}\\p{N}]`, its CJK class, `str.isspace`,
`JOINING_MARKS`), looked up in a table of the basic plane filled as code points are met: the words, joins and
bigrams are `tokens.words_and_joins`' and `tokens.cjk_bigrams`' of each text (tests hold them equal), with no
regex run over the texts.
"""

from __future__ import annotations

import functools

import numpy as np

from nlmsync.text.tokens import CJK as _CJK
from nlmsync.text.tokens import JOINING_MARKS, class_bits, word_character_runs, word_characters
from nlmsync.text.tokens import MARK as _MARK
from nlmsync.text.tokens import SPACE as _SPACE
from nlmsync.text.tokens import WORD as _WORD

__all__ = ["FoldTexts"]


class FoldTexts:
    """The normalized texts of a fold's JOINS segments as one array of code points, each classed by table (word
    character, white space, joining mark, CJK): rules 4 and 5 told for all of them at once, by numpy.

    A word is a run of word characters, exactly the base-token pattern's matches, and a CJK run one of CJK
    characters, exactly `tokens.cjk_bigrams`' runs: no regex runs again."""

    def __init__(self, texts: list[str]) -> None:
        # a NUL before, between and after the texts: it is neither a word's character, white space nor a joining
        # mark, so no compound joins two texts, and no word starts at the first code point or ends at the last
        joined = "\0".join(["", *texts, ""])
        if joined.isascii():  # one byte a code point, all of them classed from the start
            self.codes = np.frombuffer(joined.encode("ascii"), dtype=np.uint8)
            self.top = 0x7F
        else:
            self.codes = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
            self.top = int(self.codes.max())
        self.classes = _CODE_CLASSES.of(self.codes, self.top)
        self.texts = texts
        self._word = self.classes & _WORD
        # where a word starts (the code point before its first) and ends (its last), alternately: the texts begin
        # and end with a NUL
        self._edges = (self._word[1:] != self._word[:-1]).nonzero()[0]

    def words(self) -> list[str]:
        """Every word of the texts, in order (`tokens.words` of each, one list): the texts with each code point
        that is no word's made a space, split."""
        spaced = np.where(self._word, self.codes, 32)  # of the codes' type: decoded from its buffer as it is
        return str(spaced.data, "ascii" if self.top <= 0x7F else "utf-32-le").split()

    def word_counts(self) -> np.ndarray:
        """How many words each text has."""
        lengths = np.fromiter(map(len, self.texts), dtype=np.int64, count=len(self.texts)) + 1  # and a NUL
        text_of = np.searchsorted(lengths.cumsum() - lengths + 1, self._edges[0::2] + 1, side="right") - 1
        return np.bincount(text_of, minlength=len(self.texts))

    def joins(self) -> np.ndarray:
        """Rule 4 for every word of the texts, in order (`tokens.words_and_joins` of each, one array): the word forms
        a compound with the one before it in its text, only white space or one joining mark between."""
        classes, edges = self.classes, self._edges
        joins = np.zeros(len(edges) // 2, dtype=bool)
        if len(joins) < 2:
            return joins
        # the separator before each word but the first: after the last code point of the word before, up to `ends`
        ends, befores = edges[2::2], edges[1:-1:2]
        gaps = ends - befores
        # white space up to each code point (`_SPACE` is 1), modulo 2**32: exact for each separator, shorter than that
        spaces = (classes & _SPACE).cumsum(dtype=np.int32)
        joins[1:] = (spaces[ends] - spaces[befores] == gaps) | ((gaps == 1) & ((classes[ends] & _MARK) != 0))
        return joins

    def bigrams(self) -> tuple[np.ndarray, np.ndarray]:
        """Rule 5: the CJK bigrams of the texts in order (`tokens.cjk_bigrams` of each), each as its two code
        points (`first << 21 | second`), and the index of its text."""
        if self.top < _FIRST_CJK:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        cjk = (self.classes & _CJK) != 0
        at = (cjk[:-1] & cjk[1:]).nonzero()[0]
        codes = (self.codes[at].astype(np.int64) << 21) | self.codes[at + 1]
        spans = np.fromiter(map(len, self.texts), dtype=np.int64, count=len(self.texts)) + 1  # each text and a NUL
        return codes, np.searchsorted(spans.cumsum() - spans + 1, at, side="right") - 1


_KNOWN = 0x80  # in `_CodeClasses.table`: the code point's class bits are filled in
_FIRST_CJK = 0x1100  # no code point below is a CJK run's (a test checks the table)

# A fold of fewer code points than this (a few notes: an edit) classes the distinct ones the table does not know
# yet; a fold of more fills the table for the whole basic plane at once (`_plane_classes`).
_TABLE_WORTH = 1 << 16


class _CodeClasses:
    """Each code point's class bits: `_WORD` (`[\\p{L}\\p{N}]`), `_SPACE` (white space), `_MARK` (a joining mark),
    `_CJK` (what CJK runs are made of), and `_KNOWN`.

    One table of the basic plane per process, filled as code points are met (ASCII's from the start): a sync of a
    few notes classes only the code points new to it, a full build all of them at once. A code point beyond the
    plane (rare) is classed on its own each time."""

    def __init__(self) -> None:
        self.table: np.ndarray = np.zeros(0x10000, dtype=np.uint8)
        self.table[:0x80] = _ascii_classes() | _KNOWN
        self.whole = False

    def of(self, codes: np.ndarray, top: int) -> np.ndarray:
        """The classes of `codes` (uint32), whose largest is `top`, each with `_KNOWN` set."""
        classes: np.ndarray
        if top < 0x80:  # ASCII: known from the start
            classes = self.table[codes]
            return classes
        if top > 0xFFFF:  # beyond the basic plane: each distinct one classed on its own
            beyond = codes > 0xFFFF
            classes = self.of(np.where(beyond, 0, codes), 0xFFFF)
            rare, index = np.unique(codes[beyond], return_inverse=True)
            classes[beyond] = np.array([class_bits(chr(code)) | _KNOWN for code in rare.tolist()], dtype=np.uint8)[index]
            return classes
        classes = self.table[codes]
        if classes.min(initial=_KNOWN) < _KNOWN:
            if len(codes) >= _TABLE_WORTH and not self.whole:
                self.table = _plane_classes() | _KNOWN
                self.whole = True
            else:
                new = np.unique(codes[classes < _KNOWN])
                self.table[new] = _classes_of("".join(map(chr, new.tolist()))) | _KNOWN
            classes = self.table[codes]
        return classes


def _plane_classes() -> np.ndarray:
    """The class bits of the basic multilingual plane's code points, by code point."""
    table = np.zeros(0x10000, dtype=np.uint8)
    for bit, cjk in ((_WORD, False), (_CJK, True)):
        for first, end in word_character_runs(0x10000, cjk=cjk):
            table[first:end] |= bit
    table[[code for code in range(0x10000) if chr(code).isspace()]] |= _SPACE
    table[[ord(mark) for mark in JOINING_MARKS]] |= _MARK
    return table


@functools.cache
def _ascii_classes() -> np.ndarray:
    """The class bits of the ASCII code points (no pattern needed)."""
    return np.array([class_bits(chr(code)) for code in range(0x80)], dtype=np.uint8)


def _classes_of(chars: str) -> np.ndarray:
    """The class bits of each character of `chars`, by the patterns themselves."""
    classes = np.array([(_SPACE if char.isspace() else 0) | (_MARK if char in JOINING_MARKS else 0) for char in chars],
                       dtype=np.uint8)
    classes[word_characters(chars)] |= _WORD
    classes[word_characters(chars, cjk=True)] |= _CJK
    return classes


_CODE_CLASSES = _CodeClasses()
