"""A full build's notes on their way into a `DocBatch`: their tokens staged as they come, then counted as term
ids for many notes at once with numpy (`StagedTerms.fold`), and the batch vocabulary that gives the ids
(`TermIds`).

Why: counting each note's fields in a `Counter` and then looking every (note, field, term) entry up in the
batch vocabulary costs a dictionary lookup per entry in a vocabulary of hundreds of thousands of terms, most of
them compounds (rule 4) made as strings only to be looked up once. Here each word is looked up once as it is staged (a cheap lookup: there are few distinct
words, so the dictionary stays warm; a new one gets a pending id), and the fold does the rest for many notes
at once: the texts' code points, classed by table (`_FoldTexts`), tell which adjacent words rule 4 joins and
give the CJK bigrams (rule 5) with no regex; compounds are formed from the ids of adjacent words and bigrams
from pairs of code points — a string is made and looked up only for each pair never met before — and the
counting is one sort.

What a note contributes is exactly `note_fields` + `doc_terms`: the same terms (`tokenize`'s rules; rules 4
and 5 here are `words_and_joins`', `compound_tokens`' and `cjk_bigrams`' on ids and code points, tests hold
them equal; the title heading left out), the
same counts, lengths (the body's in words) and weighted term frequencies (the file name's shared by its
words), summed body + heading + file name + folder in that order.
"""

from __future__ import annotations

import functools
import operator
from array import array
from itertools import compress, count
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nlmsync.search.markdown import title_words, without_title
from nlmsync.search.tokenize import (
    JOINING_MARKS,
    MAX_TOKEN_LENGTH,
    folder_tokens,
    path_text_words,
    text_words,
    word_character_runs,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from nlmsync.search.bm25 import Weights
    from nlmsync.search.markdown import NoteFields

FOLD_TOKENS = 1 << 17  # staged tokens counted at once: it bounds numpy's temporaries
# A word new to `TermIds.word_ids` when staged is given PENDING + its position in the fold's tokens there (staged
# by `map(word_ids.setdefault, tokens, count(PENDING))`), its id at the fold (`TermIds.resolve_words`)
PENDING = 1 << 40

# A segment is a run of staged tokens of one note and field; its kind is the field (0 body, 1 heading, 2 file
# name, 3 folder) plus flags: JOINS (base tokens in text order, adjacent ones may form a compound) and COUNTED
# (distinct terms whose counts are staged beside them: a note counted by `note_fields`).
BODY, HEADING, PATH, FOLDER = 0, 1, 2, 3
JOINS, COUNTED = 4, 8
_TEXT_KINDS = (BODY | JOINS, HEADING | JOINS, FOLDER)  # then PATH | JOINS per part of the file name
_COUNTED_KINDS = (BODY | COUNTED, HEADING | COUNTED, PATH | COUNTED, FOLDER | COUNTED)


class TermIds:
    """A batch vocabulary: `ids` gives each term an id, `terms` the term of an id.

    An id is the number of lookups made before the term's first one (`dict.setdefault` over a running count:
    one dictionary operation per lookup, new term or not), so ids are unique but not dense: `terms` has a
    place for every lookup, the term at its first one's, an empty string at the others (no id refers to them).

    `word_ids` holds only the terms met as staged tokens (words and a folder's tokens; not the compounds and
    bigrams a fold forms): the one looked up for every token, a fraction of the vocabulary, so it stays in the
    processor's cache. A word longer than `MAX_TOKEN_LENGTH` is in it with -1 (rule 3 leaves it out)."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.word_ids: dict[str, int] = {}
        self.terms: list[str] = []
        self._pairs = _KnownCodes()  # pairs of ids (`pair_ids`)
        self._bigrams = _KnownCodes()  # pairs of code points (`bigram_ids`)
        self._lengths = np.zeros(0, dtype=np.int16)  # a term is at most MAX_TOKEN_LENGTH long
        self._ascii = np.zeros(0, dtype=bool)

    def __len__(self) -> int:
        """One more than the largest id."""
        return len(self.terms)

    def lookup(self, tokens: list[str]) -> np.ndarray:
        """The ids of `tokens` (int64), new terms added."""
        start = len(self.terms)
        ids = np.fromiter(map(self.ids.setdefault, tokens, count(start)), dtype=np.int64, count=len(tokens))
        looked_up = np.array(tokens, dtype=object)
        looked_up[ids != np.arange(start, start + len(tokens))] = ""  # found again: keep no copy of the term alive
        self.terms += looked_up.tolist()
        return ids

    def resolve_words(self, tokens: list[str], ids: np.ndarray, longest: int) -> np.ndarray:
        """`ids` of `tokens` as staged (`PENDING`), the pending ones given their ids now, in `word_ids` too, but
        for the words longer than `longest`, which get -1 (in place).

        A new word's first token holds PENDING + its own position, and its later ones the same value: the firsts
        are found by that, and each later one by bisection among them, with no dictionary operation but one
        per new word."""
        pending = ids >= PENDING
        if not pending.any():
            return ids
        firsts = np.flatnonzero(ids == PENDING + np.arange(len(ids)))
        new = list(map(tokens.__getitem__, firsts.tolist()))
        short = np.fromiter(map(len, new), dtype=np.int64, count=len(new)) <= longest
        if short.all():
            fresh = self.lookup(new)
        else:
            fresh = np.full(len(new), -1, dtype=np.int64)
            fresh[short] = self.lookup(list(compress(new, short.tolist())))
        self.word_ids.update(zip(new, fresh.tolist()))
        ids[pending] = fresh[np.searchsorted(firsts, ids[pending] - PENDING)]
        return ids

    def pair_ids(self, pairs: np.ndarray) -> np.ndarray:
        """The ids of the compounds of distinct pairs of ids (`first << 32 | second`, ascending), new ones added."""
        terms = self.terms
        return self._pairs.ids(pairs, self.lookup, lambda fresh: list(map(
            operator.add, map(terms.__getitem__, (fresh >> 32).tolist()),
            map(terms.__getitem__, (fresh & 0xFFFFFFFF).tolist()))))

    def bigram_ids(self, bigrams: np.ndarray) -> np.ndarray:
        """The ids of distinct CJK bigrams given by their code points (`first << 21 | second`, ascending), new
        ones added: the same term as a two-character word that writes them."""
        return self._bigrams.ids(bigrams, self.lookup, lambda fresh: list(map(
            operator.add, map(chr, (fresh >> 21).tolist()), map(chr, (fresh & 0x1FFFFF).tolist()))))

    def shapes(self) -> tuple[np.ndarray, np.ndarray]:
        """Every term's length and whether it is ASCII, by id (what rule 4 asks of two adjacent tokens)."""
        known = len(self._lengths)
        if known < len(self.terms):
            new = self.terms[known:]
            self._lengths = np.concatenate([self._lengths, np.fromiter(map(len, new), dtype=np.int16,
                                                                       count=len(new))])
            self._ascii = np.concatenate([self._ascii, np.fromiter(map(str.isascii, new), dtype=bool,
                                                                   count=len(new))])
        return self._lengths, self._ascii


class _KnownCodes:
    """Integer codes of terms (a pair of ids, a pair of code points) met in earlier folds, ascending, and their ids:
    a code met again is found by bisection, its term's string made and looked up only the first time."""

    def __init__(self) -> None:
        self.codes = np.zeros(0, dtype=np.int64)
        self.term_ids = np.zeros(0, dtype=np.int64)

    def ids(self, codes: np.ndarray, lookup: Callable[[list[str]], np.ndarray],
            strings: Callable[[np.ndarray], list[str]]) -> np.ndarray:
        """The term ids of distinct `codes` (ascending); the new ones' terms are `strings(their codes)`."""
        at = np.searchsorted(self.codes, codes)
        known = np.zeros(len(codes), dtype=bool)
        inside = at < len(self.codes)
        known[inside] = self.codes[at[inside]] == codes[inside]
        ids = np.empty(len(codes), dtype=np.int64)
        ids[known] = self.term_ids[at[known]]
        new = np.flatnonzero(~known)
        if len(new):
            fresh = codes[new]
            ids[new] = lookup(strings(fresh))
            self.codes = np.insert(self.codes, at[new], fresh)
            self.term_ids = np.insert(self.term_ids, at[new], ids[new])
        return ids


def _distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(codes, return_inverse=True)` by a stable sort (codes come in ascending runs: faster)."""
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = _run_starts(ordered)
    inverse = np.empty(len(codes), dtype=np.int64)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


class Folded(NamedTuple):
    """The staged notes as packed entries: per note its terms' ids and weighted term frequencies (`sizes` of
    them, ids ascending), and its body, heading and path lengths."""

    term_ids: np.ndarray  # int32
    tfs: np.ndarray  # float64
    sizes: np.ndarray  # int64, one per note
    lengths: np.ndarray  # int64, (notes, 3)


class StagedTerms:
    """Notes staged for `fold`: their tokens (strings, in a list), and per note its segments' lengths and
    kinds. A note comes as its field texts (`add_text`, most notes) or already counted (`add_counts`: a
    note only the line walk reads, counted in pieces to bound its memory)."""

    def __init__(self, vocabulary: TermIds) -> None:
        self.vocabulary = vocabulary
        self._clear()

    def _clear(self) -> None:
        self.notes = 0
        self._tokens: list[str] = []
        self._texts: list[str] = []  # the normalized texts of the JOINS segments, in order (rule 4's separators)
        self._ids = array("q")  # each token's id when it was staged (PENDING + a position: new; -1: too long)
        self._offers = count(PENDING)  # what a token new to `word_ids` gets there: PENDING + its position
        self._counts = array("q")  # the counts of the COUNTED segments' terms, in order
        self._segment_lengths = array("q")
        self._segment_kinds = array("b")
        self._note_segments = array("q")
        self._body_words = array("q")  # per note: the body's length (-1: counted at the fold)
        self._name_words = array("q")  # per note: the words its file name's weight is shared by

    @property
    def full(self) -> bool:
        """Time to `fold`: `FOLD_TOKENS` tokens staged (a note given counted stages its distinct terms)."""
        return len(self._tokens) >= FOLD_TOKENS

    def add_text(self, path: str, heading: str, body: str) -> None:
        """Stage the note at `path` by its heading and body texts (`markdown.whole_fields`).

        Its tokens are looked up at once, while they are fresh in the processor's cache (at the fold, after
        100k other tokens, each lookup would have to fetch its token again); a new word is given a pending id
        there (`PENDING`), its id at the fold."""
        folder, _, name = path.rpartition("/")
        name_words = path_text_words(name)
        # the title is the file name's words (`title_words`): its one part's, but for a name split by `\\`
        title = ([word for part in name_words for word in part.words if len(word) <= MAX_TOKEN_LENGTH]
                 if len(name_words) == 1 else title_words(path))
        body_text, body_words = text_words(body)
        heading_text, heading_words = text_words(without_title(heading, title))
        texts = [body_text, heading_text]
        folder_terms = folder_tokens(folder)
        note_tokens = body_words + heading_words
        note_tokens += folder_terms
        lengths = [len(body_words), len(heading_words), len(folder_terms)]
        kinds: tuple[int, ...] = _TEXT_KINDS
        for text, words in name_words:
            texts.append(text)
            note_tokens += words
            lengths.append(len(words))
            kinds += (PATH | JOINS,)
        self._tokens += note_tokens
        self._texts += texts
        self._ids.extend(map(self.vocabulary.word_ids.setdefault, note_tokens, self._offers))
        self._segment_lengths.extend(lengths)
        self._segment_kinds.extend(kinds)
        self._note_segments.append(len(lengths))
        self._body_words.append(-1)  # counted at the fold, once rule 3 has left out the longest words
        self._name_words.append(len(title))
        self.notes += 1

    def add_counts(self, fields: NoteFields) -> None:
        """Stage a note by its fields' token counts."""
        setdefault = self.vocabulary.word_ids.setdefault
        for field in (fields.body, fields.heading, fields.path, fields.folder):
            self._tokens += field
            self._ids.extend(map(setdefault, field, self._offers))
            self._counts.extend(field.values())
            self._segment_lengths.append(len(field))
        self._segment_kinds.extend(_COUNTED_KINDS)
        self._note_segments.append(len(_COUNTED_KINDS))
        self._body_words.append(fields.body_words)
        self._name_words.append(fields.name_words)
        self.notes += 1

    def fold(self, weights: Weights) -> Folded:
        """Count the staged notes' terms and weigh them (`doc_terms`' floats), then start afresh."""
        tokens, vocabulary = self._tokens, self.vocabulary
        # rule 3: a word longer than MAX_TOKEN_LENGTH gets no id and is left out
        ids = vocabulary.resolve_words(tokens, np.frombuffer(self._ids, dtype=np.int64).copy(), MAX_TOKEN_LENGTH)
        segment_lengths = np.frombuffer(self._segment_lengths, dtype=np.int64)
        token_segment = np.repeat(np.arange(len(segment_lengths)), segment_lengths)
        segment_kinds = np.frombuffer(self._segment_kinds, dtype=np.int8)
        kind = segment_kinds[token_segment]
        texts = _FoldTexts(self._texts)  # one per JOINS segment, in order
        joins = np.zeros(len(ids), dtype=bool)  # rule 4: the token forms a compound with the one before it
        joins[np.flatnonzero(kind & JOINS)] = texts.joins()
        kept = ids >= 0
        if not kept.all():
            joins[1:] &= kept[:-1]  # none across a word left out
            ids, token_segment, kind, joins = ids[kept], token_segment[kept], kind[kept], joins[kept]
        segment_note = np.repeat(np.arange(self.notes), np.frombuffer(self._note_segments, dtype=np.int64))
        note = segment_note[token_segment]
        field = kind & 3
        counted = (kind & COUNTED) != 0
        body_words = np.frombuffer(self._body_words, dtype=np.int64)
        if (body_words < 0).any():  # a note given by its texts: its body's words that rule 3 kept
            words = np.bincount(note[kind == BODY | JOINS], minlength=self.notes)
            body_words = np.where(body_words < 0, words, body_words)
        seconds = self._compounds(ids, joins)  # rule 4: the second token of each compound
        compound_ids = self._compound_ids(ids[seconds - 1], ids[seconds])
        bigrams, bigram_text = texts.bigrams()  # rule 5, from the code points
        distinct, bigram_of = _distinct(bigrams)
        bigram_segment = np.flatnonzero(segment_kinds & JOINS)[bigram_text]
        ids = np.concatenate([ids, compound_ids, vocabulary.bigram_ids(distinct)[bigram_of]])
        field = np.concatenate([field, field[seconds], segment_kinds[bigram_segment] & 3])
        note = np.concatenate([note, note[seconds], segment_note[bigram_segment]])
        stride = max(len(vocabulary), 1)
        keys = (note * stride + ids) * 4 + field  # ordered by note, then term, then field
        repeats = None
        if counted.any():  # a counted note's terms are distinct per field: each weighs its count
            repeats = np.ones(len(keys), dtype=np.int64)
            repeats[np.flatnonzero(counted)] = np.frombuffer(self._counts, dtype=np.int64)
        keys, counts = _counted(keys, repeats)
        folded = _weigh(keys, counts, stride, weights, body_words, np.frombuffer(self._name_words, dtype=np.int64))
        self._clear()
        return folded

    def _compounds(self, ids: np.ndarray, joins: np.ndarray) -> np.ndarray:
        """Positions of the tokens that form a compound with the one before them (rule 4, `compound_tokens`):
        words of one text in a row that `joins` joins (rule 3 applied), both ASCII, joined at most
        `MAX_TOKEN_LENGTH` long."""
        seconds = np.flatnonzero(joins)
        lengths, is_ascii = self.vocabulary.shapes()
        first, second = ids[seconds - 1], ids[seconds]
        joined = is_ascii[first] & is_ascii[second] & (lengths[first] + lengths[second] <= MAX_TOKEN_LENGTH)
        found: np.ndarray = seconds[joined]
        return found

    def _compound_ids(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The term ids of the compounds of these pairs of term ids."""
        pairs, pair_of = _distinct((first << 32) | second)
        ids: np.ndarray = self.vocabulary.pair_ids(pairs)[pair_of]
        return ids


class _FoldTexts:
    """The normalized texts of a fold's JOINS segments as one array of code points, each classed by table (word
    character, white space, joining mark, CJK): rules 4 and 5 told for all of them at once, by numpy.

    A word is a run of word characters, exactly the base-token pattern's matches, and a CJK run one of CJK
    characters, exactly `tokenize.cjk_bigrams`' runs: no regex runs again."""

    def __init__(self, texts: list[str]) -> None:
        # a NUL is neither a word's character, white space nor a joining mark: no compound joins two texts
        self.codes = np.frombuffer("\0".join(texts).encode("utf-32-le"), dtype=np.uint32)
        self.classes = _classes(self.codes)
        spans = np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1  # each text and its NUL
        self.starts = np.cumsum(spans) - spans

    def joins(self) -> np.ndarray:
        """Rule 4 for every word of the texts, in order (`tokenize.words_and_joins` of each, one array): the word forms
        a compound with the one before it in its text, only white space or one joining mark between."""
        classes = self.classes
        edges = np.diff((classes & _WORD).astype(np.int8), prepend=np.int8(0), append=np.int8(0))
        starts, ends = np.flatnonzero(edges > 0), np.flatnonzero(edges < 0)
        if len(starts) < 2:
            return np.zeros(len(starts), dtype=bool)
        gap_starts, gap_lengths = ends[:-1], starts[1:] - ends[:-1]  # the separator before each word but the first
        first = classes[gap_starts]
        joins = (first & (_SPACE | _MARK)) != 0  # right for a separator of one character: most are
        longer = np.flatnonzero(gap_lengths > 1)
        if len(longer):  # white space all through? (each character of each longer separator looked at)
            lengths = gap_lengths[longer]
            offsets = np.concatenate([[0], np.cumsum(lengths[:-1])])
            at = np.arange(int(lengths.sum())) + np.repeat(gap_starts[longer] - offsets, lengths)
            joins[longer] = np.logical_and.reduceat((classes[at] & _SPACE) != 0, offsets)
        return np.concatenate([[False], joins])

    def bigrams(self) -> tuple[np.ndarray, np.ndarray]:
        """Rule 5: the CJK bigrams of the texts in order (`tokenize.cjk_bigrams` of each), each as its two code
        points (`first << 21 | second`), and the index of its text."""
        cjk = (self.classes & _CJK) != 0
        at = np.flatnonzero(cjk[:-1] & cjk[1:])
        codes = (self.codes[at].astype(np.int64) << 21) | self.codes[at + 1]
        return codes, np.searchsorted(self.starts, at, side="right") - 1


_WORD, _SPACE, _MARK, _CJK = 1, 2, 4, 8


def _classes(codes: np.ndarray) -> np.ndarray:
    """Each code point's class bits: `_WORD` (`[\\p{L}\\p{N}]`), `_SPACE` (white space), `_MARK` (a joining mark),
    `_CJK` (what CJK runs are made of)."""
    table = _bmp_classes()
    if not len(codes) or int(codes.max()) <= 0xFFFF:
        classes: np.ndarray = table[codes]
        return classes
    beyond = codes > 0xFFFF
    classes = table[np.where(beyond, 0, codes)]
    if beyond.any():  # beyond the basic plane (rare): each distinct code point classed on its own
        rare, index = np.unique(codes[beyond], return_inverse=True)
        classes[beyond] = np.array([_class_of(chr(code)) for code in rare.tolist()], dtype=np.uint8)[index]
    return classes


@functools.cache
def _bmp_classes() -> np.ndarray:
    """`_classes` of the basic multilingual plane's code points, by code point."""
    table = np.zeros(0x10000, dtype=np.uint8)
    for bit, cjk in ((_WORD, False), (_CJK, True)):
        for first, end in word_character_runs(0x10000, cjk=cjk):
            table[first:end] |= bit
    table[[code for code in range(0x10000) if chr(code).isspace()]] |= _SPACE
    table[[ord(mark) for mark in JOINING_MARKS]] |= _MARK
    return table


def _class_of(char: str) -> int:
    code = ord(char)
    return ((_WORD if word_character_runs(code + 1, start=code) else 0)
            | (_CJK if word_character_runs(code + 1, start=code, cjk=True) else 0)
            | (_SPACE if char.isspace() else 0) | (_MARK if char in JOINING_MARKS else 0))


def _counted(keys: np.ndarray, repeats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(keys, return_counts=True)` by a stable sort: a fold's keys come in runs already ascending (the
    notes in order), which the stable sort merges in half the time of the quicksort `np.unique` makes. With
    `repeats`, each key counts its repeat instead of one."""
    if repeats is None:
        keys = np.sort(keys, kind="stable")
        firsts = np.flatnonzero(_run_starts(keys))
        return keys[firsts], np.diff(np.append(firsts, len(keys)))
    order = np.argsort(keys, kind="stable")
    keys, repeats = keys[order], repeats[order]
    firsts = np.flatnonzero(_run_starts(keys))
    return keys[firsts], np.add.reduceat(repeats, firsts)


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """Whether each value of an ascending array starts a run of equal values."""
    return np.concatenate([[True], ordered[1:] != ordered[:-1]]) if len(ordered) else np.zeros(0, dtype=bool)


def _weigh(keys: np.ndarray, counts: np.ndarray, stride: int, weights: Weights, body_words: np.ndarray,
           name_words: np.ndarray) -> Folded:
    """Per (note, term) the weighted counts of body, heading, file name and folder added in that order, as
    `doc_terms` adds them; `keys` are (note * stride + term) * 4 + field, ascending, each with its count.
    `body_words` and `name_words`: per note, its body's length and its file name's words."""
    notes = len(body_words)
    field = keys & 3
    entry = keys >> 2
    field_weights = np.array([weights.body, weights.heading, weights.path, weights.folder])[field]
    in_name = field == 2  # the file name's weight shared by its words, as `Weights.name_weight` shares it
    field_weights[in_name] = (weights.path / np.maximum(name_words, 1))[entry[in_name] // stride]
    values = counts.astype(np.float64) * field_weights
    first = _run_starts(entry)
    entry_of = np.cumsum(first) - 1
    entries = entry[first]
    tf = np.zeros(len(entries))
    for f in range(4):  # one value per (note, term) and field: the fields add up in order
        in_field = field == f
        tf[entry_of[in_field]] += values[in_field]
    by_field = np.bincount(entry // stride * 4 + field, weights=counts, minlength=notes * 4).astype(np.int64)
    by_field = by_field.reshape(-1, 4)
    name_lengths = np.maximum(by_field[:, 2], 1)  # `markdown.name_length`: at least one
    lengths = np.stack([body_words, by_field[:, 1], name_lengths + by_field[:, 3]], axis=1)
    if not (weights.body and weights.heading and weights.path and weights.folder):
        entries, tf = entries[tf > 0], tf[tf > 0]
    return Folded((entries % stride).astype(np.int32), tf, np.bincount(entries // stride, minlength=notes), lengths)
