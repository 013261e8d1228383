"""Mapping an answer's citations back to vault notes: where the cited text is — in a note, or in which note of a
pack — and under which heading.

A server does not quote the bytes it was sent: NotebookLM hands back its indexed paragraphs re-joined by blank
lines, with white space and markdown marks (`**`, `[…](…)`, list bullets) normalized. A quote is therefore
matched word for word: both texts are cut into words (runs of letters and digits; each character of a script
written without spaces — Chinese, Japanese, Thai, Lao, Khmer, Myanmar — a word of its own; compared
case-insensitively after NFKC), and the quote's words must appear one after another in the note. A quote the
server gave as the note has it (white space aside, its first and last words whole) is placed where it stands
verbatim, so that notes that differ only in a symbol (an alias of `[` and one of `,`) are told apart. Otherwise the quote is first looked for with its
sentence punctuation (`.`, `,`, `;`, `:`, `!`, `?`) among its words, so that of two
notes holding its words the one whose sentence ends where the quote ends is taken ("an alias of `npm run`."
is not "an alias of `npm run restart`."); then by its words alone. A quote that does not appear whole is tried
by its longest piece between ellipses, then by its first and its last dozen words (at least `MIN_PIECE_WORDS`
each); one that still cannot be found is not placed — never guessed. A quote of a pack's own path heading
(`# notes/heapsort.md`, the line above each note) is placed at the start of that note. Of several notes that hold
a quote alike, the caller says which to name (`find_cited_note`'s `prefer`).
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from nlmsync.search import markdown_lines
from nlmsync.vault import parse_front_matter

PIECE_WORDS = 12
"""The length of the first and last pieces of a quote tried when it does not appear whole."""
MIN_PIECE_WORDS = 4
"""A piece shorter than this says too little to place a quote by."""

_UNSPACED = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(f"[^\\W_{_UNSPACED}]+|[{_UNSPACED}]")
_WORD_OR_MARK = re.compile(f"[^\\W_{_UNSPACED}]+|[{_UNSPACED}]|[.,;:!?\u3002\uff0c\uff1b\uff1a\uff01\uff1f]")
_ELLIPSIS = re.compile(r"\.\.\.|…")
# a character of a word of a script written with spaces, and the edges a verbatim quote's first and last words need
_SPACED_WORD = re.compile(f"[^\\W_{_UNSPACED}]")
_EDGE_BEFORE = f"(?<![^\\W_{_UNSPACED}])"
_EDGE_AFTER = f"(?![^\\W_{_UNSPACED}])"
_SEPARATOR = "\x00"


@dataclass(frozen=True)
class Words:
    """A text's words, normalized, with the offset in the text where each starts."""

    joined: str
    """The words, each followed by a separator: a run of words is found by one `str.find`."""
    offsets: list[int]
    """Per word, its start in the text."""
    starts: list[int]
    """Per word, its start in `joined`."""

    @classmethod
    def of(cls, text: str, pattern: re.Pattern[str] = _WORD) -> Words:
        """The words of `text` (with `_WORD_OR_MARK` as `pattern`, its punctuation marks too)."""
        offsets: list[int] = []
        starts: list[int] = []
        parts: list[str] = []
        position = 0
        for match in pattern.finditer(text):
            word = _normal(match.group())
            offsets.append(match.start())
            starts.append(position)
            parts.append(word)
            position += len(word) + 1
        return cls(_SEPARATOR.join(parts) + _SEPARATOR if parts else "", offsets, starts)

    def find(self, words: Sequence[str]) -> int | None:
        """The text offset where `words` (normalized) start one after another, or None."""
        if not words or not self.joined:
            return None
        needle = _SEPARATOR.join(words) + _SEPARATOR
        at = 0
        while True:
            found = self.joined.find(needle, at)
            if found < 0:
                return None
            if found == 0 or self.joined[found - 1] == _SEPARATOR:  # a whole word, not the end of one
                return self.offsets[bisect_right(self.starts, found) - 1]
            at = found + 1


def _normal(word: str) -> str:
    return unicodedata.normalize("NFKC", word).casefold()


def quote_words(quote: str) -> list[list[str]]:
    """The word runs to look a quote up by, most telling first: all of it; its longest piece between
    ellipses; its first and last `PIECE_WORDS` words (pieces shorter than `MIN_PIECE_WORDS` are left out)."""
    words = [_normal(w) for w in _WORD.findall(quote)]
    tries = [words] if words else []
    pieces = sorted(([_normal(w) for w in _WORD.findall(p)] for p in _ELLIPSIS.split(quote)), key=len, reverse=True)
    if len(pieces) > 1 and len(pieces[0]) >= MIN_PIECE_WORDS:
        tries.append(pieces[0])
    if len(words) > PIECE_WORDS:
        tries.extend([words[:PIECE_WORDS], words[-PIECE_WORDS:]])
    return [t for i, t in enumerate(tries) if (i == 0 or len(t) >= MIN_PIECE_WORDS) and t not in tries[:i]]


def find_cited_text(text: str, cited: str) -> int | None:
    """The offset in `text` where the cited passage starts (matched word for word, see the module), or None."""
    found = find_cited_note([text], cited)
    return found[1] if found is not None else None


def find_cited_note(texts: Sequence[str | None], cited: str, paths: Sequence[str] = (),
                    prefer: Callable[[int], Any] | None = None) -> tuple[int, int] | None:
    """Which of `texts` (the notes of a pack, in order; None for one that cannot be read) holds the cited passage,
    and where it starts: with the notes' `paths`, the note whose path heading line (`# path`, which the pack puts
    above it) is the whole passage, word for word (at 0); else the notes holding it verbatim (white space aside,
    whole words), else those holding it whole with its punctuation, else those holding its words, else those
    holding its most telling piece.

    When several notes hold it at the first of these steps that finds it (translations, release notes that
    repeat a line), `prefer` chooses: the note with the smallest `prefer(index)`, the first of them in order when
    they tie (`prefer` None: the first)."""
    words = [_normal(w) for w in _WORD.findall(cited)]
    headed = [i for i, path in enumerate(paths) if words and [_normal(w) for w in _WORD.findall(path)] == words]
    if len(headed) > 1:  # paths with the same words (`a-b.md`, `a b.md`): the one written as quoted, if any
        headed = [i for i in headed if paths[i] == " ".join(cited.split()).lstrip("# ")]
    if len(headed) == 1:
        return headed[0], 0
    holders = _verbatim(texts, cited)
    if not holders:
        marked = [_normal(w) for w in _WORD_OR_MARK.findall(cited)]
        holders = _holding(texts, [marked], _WORD_OR_MARK) if len(marked) > len(_WORD.findall(cited)) else []
    if not holders:
        holders = _holding(texts, quote_words(cited), _WORD)
    if not holders:
        return None
    return min(holders, key=lambda found: prefer(found[0])) if prefer is not None else holders[0]


def _verbatim(texts: Sequence[str | None], cited: str) -> list[tuple[int, int]]:
    """The notes holding the passage as written, white space aside, and where: its first and last words whole (a
    quote starting "heap sort" is not inside "minheap sort"; a script written without spaces has no such edge)."""
    pieces = cited.split()
    if not pieces:
        return []
    start = _EDGE_BEFORE if _SPACED_WORD.match(pieces[0][0]) else ""
    end = _EDGE_AFTER if _SPACED_WORD.match(pieces[-1][-1]) else ""
    verbatim = re.compile(start + r"\s+".join(map(re.escape, pieces)) + end)
    found = []
    for index, text in enumerate(texts):
        match = verbatim.search(text) if text is not None else None
        if match is not None:
            found.append((index, match.start()))
    return found


def _holding(texts: Sequence[str | None], runs: Sequence[Sequence[str]], pattern: re.Pattern[str]
             ) -> list[tuple[int, int]]:
    """The texts holding the first of `runs` that some text holds, and the offset where it starts in each."""
    words = [Words.of(text, pattern) if text is not None else None for text in texts]
    for run in runs:
        found = [(index, offset) for index, note in enumerate(words)
                 if note is not None and (offset := note.find(run)) is not None]
        if found:
            return found
    return []


def heading_above(text: str, offset: int) -> str | None:
    """The text of the nearest markdown heading (ATX `## X` or setext, underlined with `===`/`---`)
    starting at or before `offset`; code fences and front matter are not headings."""
    heading: str | None = None
    for line in markdown_lines(text, parse_front_matter(text).body_start):
        if line.offset > offset:
            break
        if line.kind in ("heading", "setext") and line.text:
            heading = line.text
    return heading
