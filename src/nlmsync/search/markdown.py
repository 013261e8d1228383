"""Markdown fields of a note, which the field weights weigh: heading text, body text and the vault path.

Heading text is every ATX heading (`## Title`) and setext heading (a line underlined with `===`
or `---`) outside fenced code, plus the front matter's `title`, `aliases` and `tags`. Body text
is everything else, fenced code included, and the values of the other front matter keys
(the `nlmsync` switch itself is not text). The path field is the vault-relative path, in two parts:
the folder (`pages/windows/`, `ru/Plugins/`) and the file name, which are not the same evidence (a
folder names a platform or a language that thousands of notes share; a file name names the note).

`split_markdown` gives the two fields as text; `note_fields` counts their tokens; `whole_fields` gives the texts
of a note that needs no line walk, which a full build stages as they are (`search.staged_terms`). A note of up to
`WHOLE_FIELD_CHARS` characters whose lines are all ATX headings, body lines or fenced code (no setext
underline outside fenced code, only `\n` line breaks: most notes) has its headings outside fenced code found
and removed by one regex over the whole note, and each field is tokenized in one call. Any other note is walked
line by line (`markdown_lines`), its body tokenized straight from the note in bounded pieces (`count_tokens`), so
indexing a note of many megabytes takes little more memory than the note itself. Both give the same counts.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, NamedTuple

from nlmsync.search.tokenize import folder_tokens, tokenize_path
from nlmsync.text import (
    FrontMatter,
    base_tokens,
    count_tokens,
    count_tokens_and_words,
    front_matter_strings,
    iter_lines,
    normalize,
    parse_front_matter,
    text_pieces,
    tokenize,
    tokens_and_words,
)
from nlmsync.vault import NOTE_SUFFIX, has_note_suffix

HEADING_KEYS = ("title", "aliases", "tags")
_NOT_TEXT_KEYS = frozenset({"nlmsync"})

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")

WHOLE_FIELD_CHARS = 1 << 20  # a note at most this long may have its fields found and tokenized whole
# What only the line walk reads right: a line a setext underline could be (at the start of the note, or after a
# `\n`: a pattern that starts with the `\n` is searched for by it, several times faster than one starting with
# `^`) outside fenced code, and a line break other than `\n` (each of them ends a line for `str.splitlines`,
# which the walk splits by).
_SETEXT_LINE = r" {0,3}(?:=+|-+)[ \t]*$"
_SETEXT_FIRST_LINE = re.compile(_SETEXT_LINE, re.MULTILINE)
_SETEXT_LINE_AFTER_BREAK = re.compile("\n" + _SETEXT_LINE, re.MULTILINE)
_OTHER_LINE_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
# A line that may open or close a fence: white space (`str.strip`'s, which `\s` is), then three backticks or tildes.
# `markdown_lines` tells which of them do; no other line can.
_FENCE_LINE = re.compile(r"^[^\S\n]*(?:`{3}|~{3}).*", re.MULTILINE)
# `_ATX` over a whole note, a heading line at its start or after a `\n` (`.` and `[ \t]` never cross one)
_ATX_LINE = r" {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$"
_ATX_FIRST_LINE = re.compile(_ATX_LINE, re.MULTILINE)
_ATX_LINE_AFTER_BREAK = re.compile("\n" + _ATX_LINE, re.MULTILINE)


@dataclass(frozen=True)
class NoteText:
    """The two text fields of a note, before tokenization."""

    heading: str
    body: str


@dataclass(frozen=True)
class NoteFields:
    """Token counts per field, and what the weighted BM25 needs besides: the words of the body (its length)
    and of the file name (a note's weighing shares the file name's weight among them)."""

    body: Counter[str]
    heading: Counter[str]
    path: Counter[str]  # the file name's tokens
    folder: Counter[str]  # the tokens of the folders the note is in
    # The body's length is its words (base tokens), not its tokens: the compounds and CJK bigrams repeat the
    # words they are made of, so counted as length they made a page of English commands (a compound for each
    # pair of words) or of CJK text (a bigram for each character) look up to twice as long as its words.
    body_words: int
    name_words: int

    @property
    def lengths(self) -> tuple[int, int, int]:
        """Body, heading and path lengths: the body's words, the heading's tokens, the path's (the folder's
        tokens and the file name's, at least one: `name_length`)."""
        return (self.body_words, sum(self.heading.values()),
                name_length(sum(self.path.values())) + sum(self.folder.values()))


def name_length(tokens: int) -> int:
    """A file name's length: its tokens, at least one. Every note has a file name; one the tokenizer finds
    no word in (`((.md`, `..md`, an emoji) is a name of one word it cannot read, not an absent one. Counted
    as none, such a note was the shortest of its kind by the file name's weight (4 words of its body), so
    among notes that all hold a query's words (the translations of one template line, "This command is an
    alias of X") the nameless ones came first whatever the query."""
    return max(tokens, 1)


LineKind = Literal["heading", "setext", "code", "text", "blank"]


class MarkdownLine(NamedTuple):  # a named tuple: one per line of every note read, cheap to make
    """One line of a note as markdown sees it.

    `kind` is `heading` (ATX; `text` is the title), `setext` (an underline: the `absorbed` text
    lines just before it are the heading, `text` is their words and `offset` where they start),
    `code` (inside or opening/closing a fence), `text` or `blank`. `offset` is where the line
    starts in the whole note, `end` where it ends (after its line break).
    """

    kind: LineKind
    offset: int
    text: str
    absorbed: int = 0
    end: int = 0


def markdown_lines(text: str, start: int = 0) -> Iterator[MarkdownLine]:
    """Walk `text[start:]` line by line, telling headings from fenced code and body text."""
    fence: str | None = None
    # the open paragraph (for a setext underline): where it starts and its number of lines; its text is
    # read back from the note only when an underline makes it a heading
    paragraph_start, paragraph_lines = 0, 0
    offset = start
    for raw in iter_lines(text, start):
        line = raw.splitlines()[0]  # the line without its terminator, whichever splitlines saw
        here, offset = offset, offset + len(raw)
        if fence is not None:
            if _closes(line, fence):
                fence = None
            yield MarkdownLine("code", here, line, end=offset)
            continue
        opening = _FENCE_OPEN.match(line)
        if opening:
            fence = opening.group(1)
            paragraph_lines = 0
            yield MarkdownLine("code", here, line, end=offset)
            continue
        atx = _ATX.match(line)
        if atx:
            paragraph_lines = 0
            yield MarkdownLine("heading", here, atx.group(2) or "", end=offset)
            continue
        if paragraph_lines and _SETEXT.match(line):
            words = " ".join(p.strip() for p in text[paragraph_start:here].splitlines())
            yield MarkdownLine("setext", paragraph_start, words, absorbed=paragraph_lines, end=offset)
            paragraph_lines = 0
            continue
        if line.strip():
            if not paragraph_lines:
                paragraph_start = here
            paragraph_lines += 1
            yield MarkdownLine("text", here, line, end=offset)
        else:
            paragraph_lines = 0
            yield MarkdownLine("blank", here, line, end=offset)


def split_markdown(text: str, front: FrontMatter | None = None) -> NoteText:
    """Separate heading text from body text (front matter included as described above)."""
    if front is None:
        front = parse_front_matter(text)
    heading, body = _front_matter_texts(front)
    for item in markdown_lines(text, front.body_start):
        if item.kind == "heading":
            heading.append(item.text)
        elif item.kind == "setext":
            # the whole paragraph above the underline is one heading
            del body[len(body) - item.absorbed:]
            heading.append(item.text)
        elif item.kind != "blank":
            body.append(item.text)
    return NoteText(heading="\n".join(heading), body="\n".join(body))


def whole_fields(text: str, front: FrontMatter | None = None) -> NoteText | None:
    """`split_markdown`'s two texts made by one regex over the whole note, for a note of at most
    `WHOLE_FIELD_CHARS` characters that needs no line walk (most notes); None for any other note."""
    if front is None:
        front = parse_front_matter(text)
    markdown = text[front.body_start:] if len(text) <= WHOLE_FIELD_CHARS else ""
    if not markdown or any(map(markdown.__contains__, _OTHER_LINE_BREAKS)):
        return None
    fenced = _fenced_code(markdown) if "```" in markdown or "~~~" in markdown else []
    if _setext_line_outside(markdown, fenced):
        return None
    headings, body_values = _front_matter_texts(front)
    body_values.append(_without_atx_headings(markdown, headings, fenced))
    return NoteText(heading="\n".join(headings), body="\n".join(body_values))


def _fenced_code(markdown: str) -> list[tuple[int, int]]:
    """Where `markdown`'s fenced code is, as `markdown_lines` finds it: from the start of each opening fence line to
    the end of its closing one (or of the note), told from the lines that may open or close a fence alone."""
    spans: list[tuple[int, int]] = []
    fence, start = "", 0
    for line in _FENCE_LINE.finditer(markdown):
        if not fence:
            opening = _FENCE_OPEN.match(line.group())
            if opening:
                fence, start = opening.group(1), line.start()
        elif _closes(line.group(), fence):
            spans.append((start, line.end()))
            fence = ""
    if fence:
        spans.append((start, len(markdown)))
    return spans


def _closes(line: str, fence: str) -> bool:
    """Whether `line` closes the fenced code `fence` opened: the same mark, at least as long, and nothing else."""
    stripped = line.strip()
    return stripped.startswith(fence) and set(stripped) == {fence[0]}


def _setext_line_outside(markdown: str, fenced: list[tuple[int, int]]) -> bool:
    """Whether a line of `markdown` outside its fenced code could be a setext underline."""
    if not fenced:
        return bool(_SETEXT_FIRST_LINE.match(markdown) or _SETEXT_LINE_AFTER_BREAK.search(markdown))
    lines = [0] if _SETEXT_FIRST_LINE.match(markdown) else []
    lines += [found.start() + 1 for found in _SETEXT_LINE_AFTER_BREAK.finditer(markdown)]
    return any(not _inside(line, fenced) for line in lines)


def _inside(offset: int, fenced: list[tuple[int, int]]) -> bool:
    """Whether `offset` of a note is in one of its spans of fenced code (`_fenced_code`, in order)."""
    at = bisect_right(fenced, (offset + 1, -1)) - 1  # the last span that starts at `offset` or before
    return at >= 0 and offset < fenced[at][1]


def _without_atx_headings(markdown: str, headings: list[str], fenced: list[tuple[int, int]]) -> str:
    """`markdown` without its ATX heading lines outside fenced code (`fenced`), whose titles are appended to
    `headings`. A heading line goes with the line break before it (the first line's, with none), so the lines
    around it stay apart."""
    first = _ATX_FIRST_LINE.match(markdown)  # the first line is never inside fenced code: it would open it
    start = 0
    if first is not None:
        headings.append(first.group(1) or "")
        start = first.end()
    pieces = []
    for heading in _ATX_LINE_AFTER_BREAK.finditer(markdown, start):
        if fenced and _inside(heading.start() + 1, fenced):
            continue
        pieces.append(markdown[start:heading.start()])
        headings.append(heading.group(1) or "")
        start = heading.end()
    if not start:
        return markdown
    pieces.append(markdown[start:])
    return "".join(pieces)


def note_fields(rel_path: str, text: str, front: FrontMatter | None = None) -> NoteFields:
    """Tokenized fields of the note at `rel_path` with this text (`front`: its front matter, if parsed): the
    token counts of `split_markdown`'s two texts, counted without building them, the title heading left out
    (`without_title`)."""
    if front is None:
        front = parse_front_matter(text)
    whole = whole_fields(text, front)
    if whole is not None:
        return text_fields(rel_path, whole)
    headings, body_values = _front_matter_texts(front)
    body, body_words = count_tokens_and_words(_body_pieces(text, front.body_start, body_values, headings))
    title = title_words(rel_path)
    heading = count_tokens(text_pieces(without_title("\n".join(headings), title) + "\n"))
    return _with_path(rel_path, body, body_words, heading, title)


def text_fields(rel_path: str, text: NoteText) -> NoteFields:
    """The tokenized fields of the note at `rel_path` with these heading and body texts (the title heading
    left out: `without_title`)."""
    body, body_words = tokens_and_words(text.body)
    title = title_words(rel_path)
    heading = Counter(tokenize(without_title(text.heading, title)))
    return _with_path(rel_path, Counter(body), body_words, heading, title)


def _with_path(rel_path: str, body: Counter[str], body_words: int, heading: Counter[str],
               title: list[str]) -> NoteFields:
    folder, _, name = rel_path.rpartition("/")
    return NoteFields(body=body, heading=heading, path=Counter(tokenize_path(name)),
                      folder=Counter(folder_tokens(folder)), body_words=body_words, name_words=len(title))


def title_words(rel_path: str) -> list[str]:
    """The words of the note's file name (its base tokens, `.md` left out): the note's title."""
    name = rel_path.rpartition("/")[2]
    return base_tokens(normalize(name[:-len(NOTE_SUFFIX)] if has_note_suffix(name) else name))


def without_title(heading: str, title: list[str]) -> str:
    """The heading text without its lines that say the title (`title_words`) and nothing else.

    Such a heading (`# dnf deplist` in `dnf-deplist.md`, a front matter `title` repeating the file name) is
    the note's title, already counted through the file name: counted as both (the file name's weight and the
    heading's added up), one mention of a word in the title weighed as much as six in the body, and a page
    named for `dnf deplist` outranked the page about `dnf` for a query about `dnf`."""
    if not title or not heading:
        return heading
    lines = heading.split("\n")
    kept = [line for line in lines if base_tokens(normalize(line)) != title]
    return heading if len(kept) == len(lines) else "\n".join(kept)


def _front_matter_texts(front: FrontMatter) -> tuple[list[str], list[str]]:
    """The front matter's heading texts (`title`, `aliases`, `tags`) and body texts (the other keys' values)."""
    headings: list[str] = []
    body_values: list[str] = []
    for key, value in front.data.items():
        if key.lower() in HEADING_KEYS:
            headings.extend(front_matter_strings(value))
        elif key.lower() not in _NOT_TEXT_KEYS:
            body_values.extend(front_matter_strings(value))
    return headings, body_values


def _body_pieces(text: str, start: int, values: list[str], headings: list[str]) -> Iterator[str]:
    """The body field in pieces for `count_tokens`: the front matter `values`, then each run of body lines
    read straight from `text` (their line breaks separate words as the `\\n` of `split_markdown` does).
    The headings met on the way are appended to `headings`."""
    for value in values:
        yield value + "\n"
    run_start, run_end = -1, -1
    for item in markdown_lines(text, start):
        if item.kind in ("text", "code"):
            if run_start < 0:
                run_start = item.offset
            run_end = item.end
            continue
        if item.kind == "setext":  # the paragraph above the underline is a heading, not body
            run_end = item.offset
            headings.append(item.text)
        elif item.kind == "heading":
            headings.append(item.text)
        if run_start >= 0 and run_end > run_start:
            yield from text_pieces(text, run_start, run_end)
        run_start = -1
    if run_start >= 0:
        yield from text_pieces(text, run_start, run_end)
