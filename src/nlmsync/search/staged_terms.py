"""Notes on their way into a `DocBatch` (a full build's, or the few a sync updates): their texts staged as they
come, then split into words and counted as term ids for all of them at once with numpy (`StagedTerms.fold`), and
the batch vocabulary that gives the ids (`TermIds`).

Why: counting each note's fields in a `Counter` and then looking every (note, field, term) entry up in the
batch vocabulary costs a dictionary lookup per entry in a vocabulary of hundreds of thousands of terms, most of
them compounds (rule 4) made as strings only to be looked up once. Here the fold does it for many notes at once:
the texts' code points, classed by table (`text.FoldTexts`), give the words (one `str.split` of the texts with every
other code point made a space, each word then looked up once in a dictionary of the words alone, which stays
warm; a new one gets a pending id), tell which adjacent words rule 4 joins and give the CJK bigrams (rule 5),
with no regex; compounds are formed from the ids of adjacent words and bigrams from pairs of code points — a
string is made and looked up only for each pair never met before — and the counting is one sort.

This is the one way a note's fields become weighted term frequencies (`_weigh`; a single note is a fold of
one): its terms are the tokenizer's (rules 4 and 5 here are `words_and_joins`', `compound_tokens`' and
`cjk_bigrams`' of `nlmsync.text` on ids and code points, which a query's text is tokenized by; tests hold them
equal), the
title heading left out; its lengths count the body in words; a term's weighted frequency adds its weighted
counts body + heading + file name + folder, in that order (the file name's weight shared by its words).
"""

from __future__ import annotations

import operator
from array import array
from itertools import compress, count, islice, repeat
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from nlmsync.search.markdown import title_words, without_title
from nlmsync.search.tokenize import folder_tokens, path_texts
from nlmsync.text import MAX_TOKEN_LENGTH, FoldTexts, base_tokens, normalize

if TYPE_CHECKING:
    from collections.abc import Callable

    from nlmsync.search.bm25 import Weights
    from nlmsync.search.markdown import NoteFields

# A fold comes once this many tokens (a counted note's distinct terms, a folder's tokens) or characters of text are
# staged: they bound numpy's temporaries
FOLD_TOKENS = 1 << 17
FOLD_CHARS = 1 << 20
# A word new to `TermIds.word_ids` when looked up is given PENDING + the number of lookups the fold made before it
# there (looked up by `map(word_ids.setdefault, tokens, count(PENDING))`), its id at the fold
# (`TermIds.resolve_words`)
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
        terms, known = self.terms, self.ids
        start, before = len(terms), len(known)
        ids = np.fromiter(map(known.setdefault, tokens, count(start)), dtype=np.int64, count=len(tokens))
        terms += tokens
        if len(known) - before < len(tokens):  # some found again (few)
            for again in (ids != np.arange(start, start + len(tokens))).nonzero()[0].tolist():
                terms[start + again] = ""  # keep no copy of the term alive
        return ids

    def resolve_words(self, ids: np.ndarray, new_words: int, longest: int) -> np.ndarray:
        """`ids` of tokens as looked up (`PENDING`), the pending ones given their ids now, in `word_ids` too, but
        for the words longer than `longest`, which get -1 (in place). The last `new_words` words of `word_ids` are
        the ones looked up since their ids were last resolved, and `ids` holds every lookup made since.

        A new word's tokens hold PENDING + the number of lookups before its first, which `word_ids` holds too: one
        dictionary operation per new word, none per token."""
        if not new_words:
            return ids
        word_ids = self.word_ids
        new = list(islice(reversed(word_ids), new_words))
        new.reverse()
        firsts = np.fromiter(map(word_ids.__getitem__, new), dtype=np.int64, count=new_words) - PENDING
        if max(map(len, new)) <= longest:
            fresh = self.lookup(new)
        else:
            short = np.fromiter(map(len, new), dtype=np.int64, count=new_words) <= longest
            fresh = np.full(new_words, -1, dtype=np.int64)
            fresh[short] = self.lookup(list(compress(new, short.tolist())))
        word_ids.update(zip(new, fresh.tolist()))
        at_first = np.empty(len(ids), dtype=np.int64)  # by a new word's first position: its id
        at_first[firsts] = fresh
        if new_words == len(word_ids):  # every word is new: every token pending
            resolved: np.ndarray = at_first[ids - PENDING]
            return resolved
        pending = ids >= PENDING
        ids[pending] = at_first[ids[pending] - PENDING]
        return ids

    def pair_ids(self, pairs: np.ndarray) -> np.ndarray:
        """The ids of the compounds of distinct pairs of ids (`first << 32 | second`, ascending), new ones added."""
        return self._pairs.ids(pairs, self.lookup, lambda fresh: self.compounds(fresh >> 32, fresh & 0xFFFFFFFF))

    def compounds(self, first: np.ndarray, second: np.ndarray) -> list[str]:
        """The compounds (rule 4) of these pairs of term ids: the two terms joined."""
        terms = self.terms
        return list(map(operator.add, map(terms.__getitem__, first.tolist()), map(terms.__getitem__, second.tolist())))

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
            lengths = np.fromiter(map(len, new), dtype=np.int16, count=len(new))
            is_ascii = np.fromiter(map(str.isascii, new), dtype=bool, count=len(new))
            self._lengths = np.concatenate([self._lengths, lengths]) if known else lengths
            self._ascii = np.concatenate([self._ascii, is_ascii]) if known else is_ascii
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
        if not len(self.codes):  # nothing met yet (all of a sync's few notes' codes): every one is new
            ids = lookup(strings(codes)) if len(codes) else np.zeros(0, dtype=np.int64)
            self.codes, self.term_ids = codes, ids
            return ids
        at = np.searchsorted(self.codes, codes)
        known = np.zeros(len(codes), dtype=bool)
        inside = at < len(self.codes)
        known[inside] = self.codes[at[inside]] == codes[inside]
        ids = np.empty(len(codes), dtype=np.int64)
        ids[known] = self.term_ids[at[known]]
        new = (~known).nonzero()[0]
        if len(new):
            fresh = codes[new]
            ids[new] = lookup(strings(fresh))
            self.codes = np.insert(self.codes, at[new], fresh)
            self.term_ids = np.insert(self.term_ids, at[new], ids[new])
        return ids


def _distinct(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(codes, return_inverse=True)`, by numpy's default sort (the result does not depend on how equal
    codes are ordered; it is the fastest where numpy sorts with the processor's vector instructions)."""
    order = codes.argsort()
    ordered = codes[order]
    starts = _run_starts(ordered)
    inverse = np.empty(len(codes), dtype=np.int64)
    inverse[order] = starts.cumsum() - 1
    return ordered[starts], inverse


class Folded(NamedTuple):
    """The staged notes as packed entries: per note its terms' ids and weighted term frequencies (`sizes` of
    them, ids ascending), and its body, heading and path lengths."""

    term_ids: np.ndarray  # int32
    tfs: np.ndarray  # float64
    sizes: np.ndarray  # int64, one per note
    lengths: np.ndarray  # int64, (notes, 3)


class StagedTerms:
    """Notes staged for `fold`: the normalized texts of their fields that rule 4 reads (body, heading and the file
    name's parts), the ids of their other tokens as looked up (`TermIds.word_ids`: a folder's tokens, a counted
    note's terms), and per note its segments' lengths and kinds. A note comes as its field texts (`add_text`, most
    notes) or already counted (`add_counts`: a note only the line walk reads, counted in pieces to bound its
    memory)."""

    def __init__(self, vocabulary: TermIds) -> None:
        self.vocabulary = vocabulary
        self._clear()

    def _clear(self) -> None:
        self.notes = 0
        self._text_notes = 0  # the notes given by their texts
        self._words = len(self.vocabulary.word_ids)  # words new to it since are looked up with pending ids
        self._texts: list[str] = []  # the normalized texts of the JOINS segments, in order (split at the fold)
        self._chars = 0  # the characters of `_texts`
        self._ids = array("q")  # the other tokens' ids when looked up (PENDING + a number: new; -1: too long)
        self._offers = count(PENDING)  # what a token new to `word_ids` gets there: PENDING + the lookups before
        self._counts = array("q")  # the counts of the COUNTED segments' terms, in order
        self._segment_lengths = array("q")  # a JOINS segment's: -1 (its words are counted at the fold)
        self._segment_kinds = array("b")
        self._note_segments = array("q")
        self._body_words = array("q")  # per note: the body's length (-1: counted at the fold)
        self._name_words = array("q")  # per note: the words its file name's weight is shared by

    @property
    def full(self) -> bool:
        """Time to `fold`: `FOLD_CHARS` characters of text or `FOLD_TOKENS` other tokens staged (a note given
        counted stages its distinct terms)."""
        return self._chars >= FOLD_CHARS or len(self._ids) >= FOLD_TOKENS

    def add_text(self, path: str, heading: str, body: str) -> None:
        """Stage the note at `path` by its heading and body texts (`markdown.whole_fields`).

        Its texts' words are found at the fold, for all the notes staged at once: one numpy pass over their code
        points and one `str.split` cost less than a regex over each text."""
        folder, _, name = path.rpartition("/")
        name_parts = path_texts(name)
        # the title is the file name's words (`title_words`): its one part's, but for a name split by `\\`
        title = base_tokens(name_parts[0]) if len(name_parts) == 1 else title_words(path)
        texts = [normalize(body), normalize(without_title(heading, title)), *name_parts]
        folder_terms = folder_tokens(folder)
        self._texts += texts
        self._chars += sum(map(len, texts))
        self._ids.extend(map(self.vocabulary.word_ids.setdefault, folder_terms, self._offers))
        self._segment_lengths.extend((-1, -1, len(folder_terms)))
        self._segment_lengths.extend(repeat(-1, len(name_parts)))
        self._segment_kinds.extend(_TEXT_KINDS)
        self._segment_kinds.extend(repeat(PATH | JOINS, len(name_parts)))
        self._note_segments.append(len(_TEXT_KINDS) + len(name_parts))
        self._body_words.append(-1)  # counted at the fold, once rule 3 has left out the longest words
        self._name_words.append(len(title))
        self.notes += 1
        self._text_notes += 1

    def add_counts(self, fields: NoteFields) -> None:
        """Stage a note by its fields' token counts."""
        setdefault = self.vocabulary.word_ids.setdefault
        for field in (fields.body, fields.heading, fields.path, fields.folder):
            self._ids.extend(map(setdefault, field, self._offers))
            self._counts.extend(field.values())
            self._segment_lengths.append(len(field))
        self._segment_kinds.extend(_COUNTED_KINDS)
        self._note_segments.append(len(_COUNTED_KINDS))
        self._body_words.append(fields.body_words)
        self._name_words.append(fields.name_words)
        self.notes += 1

    def fold(self, weights: Weights) -> Folded:
        """Count the staged notes' terms and weigh them (`_weigh`), then start afresh."""
        vocabulary = self.vocabulary
        segment_kinds = np.frombuffer(self._segment_kinds, dtype=np.int8)
        segment_lengths = np.frombuffer(self._segment_lengths, dtype=np.int64)
        text_segments = (segment_kinds & JOINS).nonzero()[0]  # one per text, in order
        texts = FoldTexts(self._texts) if self._texts else None
        text_ids = None
        if texts is not None:  # the texts' words, looked up now, go where their segments are among the other tokens
            found = texts.words()
            text_ids = np.fromiter(map(vocabulary.word_ids.setdefault, found, self._offers), dtype=np.int64,
                                   count=len(found))
            segment_lengths = segment_lengths.copy()
            segment_lengths[text_segments] = texts.word_counts()
        token_segment = np.arange(len(segment_kinds)).repeat(segment_lengths)
        kind = segment_kinds[token_segment]
        in_text = (kind & JOINS) != 0
        ids = np.empty(len(kind), dtype=np.int64)
        if self._ids:
            ids[~in_text] = np.frombuffer(self._ids, dtype=np.int64)
        if text_ids is not None:
            ids[in_text] = text_ids
        # rule 3: a word longer than MAX_TOKEN_LENGTH gets no id and is left out
        ids = vocabulary.resolve_words(ids, len(vocabulary.word_ids) - self._words, MAX_TOKEN_LENGTH)
        # rule 4: whether the token forms a compound with the one before it
        text_joins = texts.joins() if texts is not None else ids[:0] >= 0
        if len(text_joins) == len(ids):  # every token is a JOINS segment's (no folder token)
            joins = text_joins
        else:
            joins = np.zeros(len(ids), dtype=bool)
            joins[in_text] = text_joins
        kept = ids >= 0
        if not kept.all():
            joins[1:] &= kept[:-1]  # none across a word left out
            ids, token_segment, kind, joins = ids[kept], token_segment[kept], kind[kept], joins[kept]
        segment_note = np.arange(self.notes).repeat(np.frombuffer(self._note_segments, dtype=np.int64))
        note = segment_note[token_segment]
        field = kind & 3
        body_words = np.frombuffer(self._body_words, dtype=np.int64)
        if self._text_notes:  # a note given by its texts: its body's words that rule 3 kept
            words = np.bincount(note[kind == BODY | JOINS], minlength=self.notes)
            body_words = words if self._text_notes == self.notes else np.where(body_words < 0, words, body_words)
        seconds = self._compounds(ids, joins)  # rule 4: the second token of each compound
        parts_ids, parts_field, parts_note = [ids, self._compound_ids(ids[seconds - 1], ids[seconds])], \
            [field, field[seconds]], [note, note[seconds]]
        bigrams, bigram_text = texts.bigrams() if texts is not None else (ids[:0], ids[:0])  # rule 5, code points
        if len(bigrams):
            distinct, bigram_of = _distinct(bigrams)
            bigram_segment = text_segments[bigram_text]
            parts_ids.append(vocabulary.bigram_ids(distinct)[bigram_of])
            parts_field.append(segment_kinds[bigram_segment] & 3)
            parts_note.append(segment_note[bigram_segment])
        stride = max(len(vocabulary), 1)
        keys = np.concatenate(parts_ids) * 4 + np.concatenate(parts_field)
        if self.notes > 1:  # (note * stride + term) * 4 + field: ordered by note, then term, then field
            keys += np.concatenate(parts_note) * (stride * 4)
        repeats = None
        if len(self._counts):  # a counted note's terms are distinct per field: each weighs its count
            repeats = np.ones(len(keys), dtype=np.int64)
            repeats[(kind & COUNTED).nonzero()[0]] = np.frombuffer(self._counts, dtype=np.int64)
        keys, counts = _counted(keys, repeats)
        folded = _weigh(keys, counts, stride, weights, body_words, np.frombuffer(self._name_words, dtype=np.int64))
        self._clear()
        return folded

    def _compounds(self, ids: np.ndarray, joins: np.ndarray) -> np.ndarray:
        """Positions of the tokens that form a compound with the one before them (rule 4, `compound_tokens`):
        words of one text in a row that `joins` joins (rule 3 applied), both ASCII, joined at most
        `MAX_TOKEN_LENGTH` long."""
        seconds = joins.nonzero()[0]
        lengths, is_ascii = self.vocabulary.shapes()
        first, second = ids[seconds - 1], ids[seconds]
        joined = is_ascii[first] & is_ascii[second] & (lengths[first] + lengths[second] <= MAX_TOKEN_LENGTH)
        found: np.ndarray = seconds[joined]
        return found

    def _compound_ids(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """The term ids of the compounds of these pairs of term ids: a few (a sync of a few notes) each looked up
        as its string, more once per distinct pair (`TermIds.pair_ids`)."""
        ids: np.ndarray
        if len(first) < _FEW_PAIRS:
            ids = self.vocabulary.lookup(self.vocabulary.compounds(first, second))
            return ids
        pairs, pair_of = _distinct((first << 32) | second)
        ids = self.vocabulary.pair_ids(pairs)[pair_of]
        return ids


# Fewer compounds than this in a fold (a few notes: an edit) are each looked up as a string; more, once per distinct
# pair of term ids (`TermIds.pair_ids`)
_FEW_PAIRS = 1 << 10

def _counted(keys: np.ndarray, repeats: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`np.unique(keys, return_counts=True)`, made of a sort and a pass (as `_distinct`, the order of equal keys
    does not matter, so numpy's default sort serves). With `repeats`, each key counts its repeat instead of one
    (whole numbers: their sum is the same in any order)."""
    if repeats is None:
        keys = np.sort(keys)
        starts = _run_starts(keys)
        return keys[starts], np.bincount(starts.cumsum() - 1)
    order = keys.argsort()
    keys, repeats = keys[order], repeats[order]
    firsts = _run_starts(keys).nonzero()[0]
    return keys[firsts], np.add.reduceat(repeats, firsts)


def _run_starts(ordered: np.ndarray) -> np.ndarray:
    """Whether each value of an ascending array starts a run of equal values."""
    starts = np.empty(len(ordered), dtype=bool)
    if len(ordered):
        starts[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=starts[1:])
    return starts


def _weigh(keys: np.ndarray, counts: np.ndarray, stride: int, weights: Weights, body_words: np.ndarray,
           name_words: np.ndarray) -> Folded:
    """Per (note, term) the weighted counts of body, heading, file name and folder added in that order; `keys` are
    (note * stride + term) * 4 + field, ascending, each with its count. `body_words` and `name_words`: per note,
    its body's length and its file name's words."""
    notes = len(body_words)
    field = keys & 3
    entry = keys >> 2
    note_field = entry // stride * 4 + field
    by_note = np.empty((notes, 4))  # each note's weight of each field: its file name's shared by its words
    by_note[:] = (weights.body, weights.heading, weights.path, weights.folder)
    by_note[:, PATH] = weights.path / np.maximum(name_words, 1)  # `Weights.name_weight`
    first = _run_starts(entry)
    entries = entry[first]
    # one value per (note, term) and field, the fields in order: each entry's sum adds them in that order
    tf = np.bincount(first.cumsum() - 1, weights=counts * by_note.ravel()[note_field])
    by_field = np.bincount(note_field, weights=counts, minlength=notes * 4).astype(np.int64).reshape(notes, 4)
    lengths = np.empty((notes, 3), dtype=np.int64)
    lengths[:, 0] = body_words
    lengths[:, 1] = by_field[:, HEADING]
    lengths[:, 2] = np.maximum(by_field[:, PATH], 1) + by_field[:, FOLDER]  # `markdown.name_length`: at least one
    if not (weights.body and weights.heading and weights.path and weights.folder):
        entries, tf = entries[tf > 0], tf[tf > 0]
    return Folded((entries % stride).astype(np.int32), tf, np.bincount(entries // stride, minlength=notes), lengths)
