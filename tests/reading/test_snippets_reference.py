"""The snippet extraction against a plain, quadratic statement of the same algorithm.

`reference_extract_snippet` below is the specification (kept here, not in `src`) of what a note up to
`EXACT_LIMIT` characters must get: exactly the same snippet. It re-joins all chosen segments for every
candidate segment and tokenizes every segment of every note; `src` keeps the snippet's length up to
date, skips the words of segments without a match, and narrows a longer note to its best windows first.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.reading.segments import _match_bracket
from nlmsync.reading.snippets import EXACT_LIMIT, extract_snippet
from nlmsync.reading.snippets import SEPARATOR as NEW_SEPARATOR
from nlmsync.search.bm25 import rank_texts
from nlmsync.search.query import query_terms
from nlmsync.text import tokenize

# --- the reference: the straightforward quadratic way of choosing snippets, as the oracle ----------

SEPARATOR = " … "
TRAILER = " …"
CODE_BONUS = 1.3
POSITION_PENALTY = 0.2
PARAGRAPH_SPLIT_THRESHOLD = 200
MIN_PREFIX_MATCH = 3
SNIPPET_K1 = 1.5


_FRONT_MATTER = regex.compile(r"\A---[ \t]*\r?\n.*?\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", regex.DOTALL)
_FENCE_OPEN = regex.compile(r"^[ \t]{0,3}(`{3,}|~{3,})[^\n]*$", regex.MULTILINE)
_CODE_HEADER = regex.compile(
    r"^[ \t]*(?:"
    r"(?:async[ \t]+)?def[ \t]+\w+[ \t]*\("
    r"|class[ \t]+\w+[ \t]*(?:[(:{<]|extends\b|implements\b)"
    r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:abstract[ \t]+)?class[ \t]+\w+[ \t]*(?:[({<]|extends\b|implements\b)"
    r"|(?:export[ \t]+)?(?:default[ \t]+)?(?:async[ \t]+)?function\b[ \t]*\*?[ \t]*\w*[ \t]*\("
    r"|func[ \t]+(?:\([^)\n]*\)[ \t]*)?\w+[ \t]*\("
    r")",
    regex.MULTILINE,
)
_PARAGRAPH_BREAK = regex.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = regex.compile(r"(?:[.!?]+[\"')\]]*(?=\s)|[。！？]+)\s*")
_WORD_GAP = regex.compile(r"\s+")
_GRAPHEME = regex.compile(r"\X")
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


@dataclass(frozen=True, slots=True)
class RefSegment:
    """A span `text[start:end]` of the content; `code` marks a code block kept whole."""

    start: int
    end: int
    code: bool = False


def reference_match_terms(tokens: Iterable[str], terms: Sequence[str]) -> list[str]:
    """Map document tokens onto query terms: exact, or a term of 3+ characters that prefixes the token.

    Tokens matching no term are kept as they are, so document lengths stay honest for BM25.
    """
    exact = set(terms)
    prefixes = [t for t in exact if len(t) >= MIN_PREFIX_MATCH]
    lengths = sorted({len(t) for t in prefixes}, reverse=True)
    heads = {t[:MIN_PREFIX_MATCH] for t in prefixes}  # cheap first filter: most tokens share no head
    mapped: list[str] = []
    for token in tokens:
        if token not in exact and token[:MIN_PREFIX_MATCH] in heads:
            for n in lengths:
                if n < len(token) and token[:n] in exact:
                    token = token[:n]
                    break
        mapped.append(token)
    return mapped


# --- segmentation ---------------------------------------------------------------------------------

def _skip_string(text: str, i: int) -> int:
    """Index just past the string literal opening at `i` (single line, backslash escapes)."""
    quote = text[i]
    j = i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == quote or (ch == "\n" and quote != "`"):
            return j + 1
        j += 1
    return j


def reference_match_bracket(text: str, open_at: int) -> int | None:
    """Index just past the bracket that closes the one at `open_at`, or None if it never closes."""
    stack: list[str] = []
    i = open_at
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch in _OPENERS:
            stack.append(_OPENERS[ch])
        elif ch in _CLOSERS:
            if not stack or stack.pop() != ch:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def _indented_body_end(text: str, header_line_start: int, body_start: int) -> int:
    """End of a Python-style block: following lines blank or indented deeper than the header."""
    indent = _indent_of(text[header_line_start:_line_end(text, header_line_start)])
    end = _line_end(text, body_start)
    pos = end + 1
    while pos < len(text):
        line_end = _line_end(text, pos)
        line = text[pos:line_end]
        if line.strip():
            if _indent_of(line) <= indent:
                break
            end = line_end
        pos = line_end + 1
    return end


def _code_block_end(text: str, header_start: int) -> int:
    """Where a def/class/function starting at `header_start` ends (brackets matched, or indentation)."""
    i = header_start
    depth = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'`":
            i = _skip_string(text, i)
            continue
        if ch == "{" and depth == 0:
            close = reference_match_bracket(text, i)
            return close if close is not None else _line_end(text, i)
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0 and not text[i + 1:_line_end(text, i)].split("#")[0].strip():
            return _indented_body_end(text, header_start, i)
        elif ch == "\n" and depth == 0:
            return i
        i += 1
    return len(text)


def _code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks and def/class/function blocks outside fences, in order, non-overlapping."""
    spans: list[tuple[int, int]] = []
    fences: list[tuple[int, int]] = []
    pos = 0
    while (opening := _FENCE_OPEN.search(text, pos)) is not None:
        marker = opening.group(1)
        closing = regex.compile(rf"^[ \t]{{0,3}}{regex.escape(marker[0])}{{{len(marker)},}}[ \t]*$",
                                regex.MULTILINE).search(text, opening.end())
        end = closing.end() if closing is not None else len(text)
        fences.append((opening.start(), end))
        pos = end
    fence_iter = iter(fences + [(len(text) + 1, len(text) + 1)])
    next_fence = next(fence_iter)
    pos = 0
    while pos < len(text):
        header = _CODE_HEADER.search(text, pos)
        start = header.start() if header is not None else len(text)
        while next_fence[0] <= start and next_fence[0] <= len(text):
            spans.append(next_fence)
            pos = next_fence[1]
            next_fence = next(fence_iter)
        if header is None:
            break
        if header.start() < pos:
            continue
        end = _code_block_end(text, header.start())
        end = min(end, next_fence[0])
        spans.append((header.start(), end))
        pos = max(end, header.end())
    return spans


def _stripped(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_by(pattern: regex.Pattern[str], text: str, start: int, end: int) -> list[tuple[int, int]]:
    pieces: list[tuple[int, int]] = []
    pos = start
    for match in pattern.finditer(text, start, end):
        pieces.append((pos, match.end()))
        pos = match.end()
    pieces.append((pos, end))
    return [p for p in (_stripped(text, s, e) for s, e in pieces) if p[0] < p[1]]


def _split_long(text: str, start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Cut a span longer than `limit` into pieces at boundaries (see `_cut_point`)."""
    pieces: list[tuple[int, int]] = []
    while end - start > limit:
        cut = start + _cut_point(text[start:end], limit)
        piece = _stripped(text, start, cut)
        if piece[0] < piece[1]:
            pieces.append(piece)
        start, _ = _stripped(text, cut, end)
    if start < end:
        pieces.append((start, end))
    return pieces


def _prose_segments(text: str, start: int, end: int, limit: int) -> list[RefSegment]:
    segments: list[RefSegment] = []
    threshold = min(PARAGRAPH_SPLIT_THRESHOLD, limit)
    for p_start, p_end in _split_by(_PARAGRAPH_BREAK, text, start, end):
        if p_end - p_start <= threshold:
            segments.append(RefSegment(p_start, p_end))
            continue
        for s_start, s_end in _split_by(_SENTENCE_END, text, p_start, p_end):
            segments.extend(RefSegment(a, b) for a, b in _split_long(text, s_start, s_end, limit))
    return segments


def _code_segments(text: str, start: int, end: int, limit: int) -> list[RefSegment]:
    start, end = _stripped(text, start, end)
    if start >= end:
        return []
    if end - start <= limit:
        return [RefSegment(start, end, code=True)]
    return [RefSegment(a, b, code=True) for a, b in _split_long(text, start, end, limit)]


def reference_segment_text(text: str, limit: int) -> list[RefSegment]:
    """Segments of `text` in order: code blocks whole (split only when longer than `limit`), then
    paragraphs, paragraphs over 200 characters by sentence, anything still over `limit` at words."""
    segments: list[RefSegment] = []
    pos = 0
    for c_start, c_end in _code_spans(text):
        segments.extend(_prose_segments(text, pos, c_start, limit))
        segments.extend(_code_segments(text, c_start, c_end, limit))
        pos = c_end
    segments.extend(_prose_segments(text, pos, len(text), limit))
    return segments


# --- boundaries ----------------------------------------------------------------------------------

def _grapheme_cut(text: str, limit: int) -> int:
    """The largest grapheme boundary <= limit."""
    cut = 0
    for match in _GRAPHEME.finditer(text):
        if match.end() > limit:
            break
        cut = match.end()
    return cut


def _cut_point(text: str, limit: int) -> int:
    """Where to cut `text` to keep at most `limit` characters.

    Preference: the last sentence end, then the last gap between words, each outside brackets (and
    only if it keeps at least a third of the budget); then any word gap; then a grapheme boundary.
    """
    if len(text) <= limit:
        return len(text)
    depth_at: list[int] = []
    depth = 0
    for ch in text[:limit + 1]:
        depth_at.append(depth)
        if ch in _OPENERS:
            depth += 1
        elif ch in _CLOSERS and depth:
            depth -= 1
    floor = limit // 3
    sentence_cuts = [m.end() for m in _SENTENCE_END.finditer(text, 0, limit + 1) if m.end() <= limit]
    word_cuts = [m.start() for m in _WORD_GAP.finditer(text, 0, limit + 1) if m.start() <= limit]
    for candidates in (sentence_cuts, word_cuts):
        good = [c for c in candidates if c >= floor and depth_at[min(c, limit)] == 0]
        if good:
            return good[-1]
    anywhere = [c for c in word_cuts if c > 0]
    if anywhere:
        return anywhere[-1]
    return _grapheme_cut(text, limit) or min(limit, len(text))


# --- selection -----------------------------------------------------------------------------------

def _assemble(text: str, chosen: list[RefSegment]) -> str:
    """Join segments in reading order: adjacent ones with their own whitespace, others with " … "."""
    parts: list[str] = []
    previous: RefSegment | None = None
    for seg in sorted(chosen, key=lambda s: s.start):
        if previous is not None:
            gap = text[previous.end:seg.start]
            parts.append(gap if not gap.strip() and len(gap) < 10 else SEPARATOR)
        parts.append(text[seg.start:seg.end])
        previous = seg
    return "".join(parts)


def _query_snippet(text: str, segments: list[RefSegment], terms: list[str], max_length: int) -> str | None:
    docs = [reference_match_terms(tokenize(text[s.start:s.end]), terms) for s in segments]
    scores = rank_texts(terms, docs, k1=SNIPPET_K1)
    weighted: list[tuple[float, int]] = []
    for i, (seg, score) in enumerate(zip(segments, scores)):
        if score <= 0:
            continue
        position = 1.0 - POSITION_PENALTY * (seg.start / len(text))
        weighted.append((score * position * (CODE_BONUS if seg.code else 1.0), i))
    if not weighted:
        return None
    weighted.sort(key=lambda pair: (-pair[0], pair[1]))
    chosen: list[int] = []
    for _, i in weighted:
        if len(_assemble(text, [segments[j] for j in chosen + [i]])) <= max_length:
            chosen.append(i)
    return _assemble(text, [segments[j] for j in _with_context(text, segments, chosen, max_length)])


def _with_context(text: str, segments: list[RefSegment], chosen: list[int], max_length: int) -> list[int]:
    """Grow the chosen segments (best first) with the segments right after, then right before them,
    within their paragraph and while the snippet still fits: context around a match, no new gap."""
    taken = list(chosen)
    grown = True
    while grown:
        grown = False
        for i in list(taken):
            for j in (i + 1, i - 1):
                if j < 0 or j >= len(segments) or j in taken:
                    continue
                first, second = sorted((segments[i], segments[j]), key=lambda s: s.start)
                gap = text[first.end:second.start]
                if gap.strip() or len(gap) >= 10 or _PARAGRAPH_BREAK.search(gap) or segments[j].code:
                    continue
                if len(_assemble(text, [segments[k] for k in taken + [j]])) <= max_length:
                    taken.append(j)
                    grown = True
    return taken


def _leading_snippet(text: str, max_length: int, *, more_follows: bool) -> str:
    """Whole segments from the start, then " …" when text was left out (room is kept for it)."""
    room = max(1, max_length - len(TRAILER))
    segments = reference_segment_text(text, room)
    chosen: list[RefSegment] = []
    for seg in segments:
        candidate = chosen + [seg]
        if len(_assemble(text, candidate)) > room:
            break
        chosen = candidate
    snippet = _assemble(text, chosen)
    if (len(chosen) < len(segments) or more_follows) and len(snippet) + len(TRAILER) <= max_length:
        snippet += TRAILER
    return snippet


def reference_extract_snippet(content: str, query: str | None = None, max_length: int = 300) -> str:
    """The most useful excerpt of `content` for `query`, at most `max_length` characters.

    With query terms that occur in the content: the best-scoring segments joined with " … ".
    Otherwise: the beginning of the content, cut at a boundary. Leading YAML front matter is skipped.

    Raises:
        ValueError: `max_length` is smaller than 1.
    """
    if max_length < 1:
        raise ValueError("max_length must be at least 1")
    front = _FRONT_MATTER.match(content)
    text = content[front.end():] if front is not None else content
    terms = query_terms(query)
    if terms:
        snippet = _query_snippet(text, reference_segment_text(text, max_length), terms, max_length)
        if snippet is not None:
            return snippet
    # Only the beginning can matter: segment a bounded prefix, not a whole huge note.
    prefix = text[:max_length * 4 + 2000]
    return _leading_snippet(prefix, max_length, more_follows=len(prefix) < len(text.rstrip()))


# --- generated ordinary notes --------------------------------------------------------------------

WORDS = ["heap", "heapsort", "sort", "sorting", "tree", "trees", "auth", "authentication", "token", "tokens",
         "JWT", "the", "is", "a", "of", "graph", "node", "edge", "prime", "number", "energy", "cache", "cheap",
         "go", "x", "login", "user", "café", "naïve", "ｈｅａｐ", "東京", "京都", "version2", "a_b", "self.x"]
QUERY_WORDS = ["heap", "sort", "tree", "auth", "token", "jwt", "the", "of", "go", "x", "login", "café",
               "京都", "zebra", "heap sort", "how does heapsort work", "ＪＷＴ"]

words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=14).map(" ".join)
sentence = st.tuples(words, st.sampled_from([".", "!", "?", '."', ".)", "", ":", "...", "。"])).map("".join)
paragraph = st.lists(sentence, min_size=1, max_size=9).map(" ".join)
heading = st.tuples(st.sampled_from(["# ", "## ", "### "]), words).map("".join)
bullets = st.lists(words, min_size=1, max_size=5).map(lambda items: "\n".join("- " + i for i in items))
cjk = st.lists(st.sampled_from(["東京は日本の首都です。", "京都には多くの寺があります。", "大阪は大きな都市です。",
                                "ヒープソートは速い！"]), min_size=1, max_size=6).map("".join)
fence = st.tuples(st.sampled_from(["```py\n", "```\n", "~~~~\n", "```sh\n"]), words,
                  st.sampled_from(["\n```", "\n~~~~", "", "\n```\nafter fence"])).map("".join)
python_def = st.tuples(st.sampled_from(["def login(user, token):", "class Heap:", "async def sort(x) :",
                                        "def broken(x, y"]), words,
                       st.sampled_from(["\n    return token", "", "\n\n    x = 1 # sort"])).map(
    lambda parts: parts[0] + "\n    " + parts[1] + parts[2])
brace_function = st.tuples(st.sampled_from(["function login(user) {", "func (s *Tree) Sort(x int) error {",
                                            "export default class Heap extends Base {", "function f() {"]),
                           words, st.sampled_from(["\n}", '\n  if (x) { return "}"; }\n}', "", "\n)}", "\n]"])).map(
    lambda parts: parts[0] + "\n  " + parts[1] + parts[2])
long_line = st.tuples(st.sampled_from(["https://example.com/", "x" * 50, "heap" * 30]),
                      st.integers(min_value=1, max_value=12)).map(lambda p: p[0] * p[1])
block = st.one_of(paragraph, paragraph, paragraph, heading, bullets, cjk, fence, python_def, brace_function,
                  long_line, sentence)
gap = st.sampled_from(["\n\n", "\n\n", "\n", "\n \n", "\n\n\n", " "])
front_matter = st.sampled_from(["", "", "---\ntitle: Heaps\ntags: [sort]\n---\n", "---\nbroken front matter\n"])


@st.composite
def notes(draw: st.DrawFn) -> str:
    blocks = draw(st.lists(block, max_size=14))
    parts = [draw(front_matter)]
    for b in blocks:
        parts.append(b)
        parts.append(draw(gap))
    return "".join(parts)


queries = st.one_of(st.none(), st.sampled_from(QUERY_WORDS),
                    st.lists(st.sampled_from(QUERY_WORDS), min_size=2, max_size=4).map(" ".join))
lengths = st.one_of(st.just(300), st.integers(min_value=1, max_value=700))


@pytest.mark.slow
@settings(max_examples=examples(600), deadline=None)
@given(content=notes(), query=queries, max_length=lengths)
def test_ordinary_notes_get_exactly_the_old_snippet(content: str, query: str | None, max_length: int) -> None:
    assert len(content) <= EXACT_LIMIT
    assert extract_snippet(content, query, max_length) == reference_extract_snippet(content, query, max_length)


@settings(max_examples=examples(300), deadline=None)
@given(content=st.lists(st.sampled_from(list("abc xyz.!?()[]{}\n\t:;\"'`é日本👍") + ["def f(x):\n  y", "\n\n",
                                                                                    "function f() {"]),
                        max_size=400).map("".join),
       query=st.one_of(st.none(), st.sampled_from(["abc", "xyz f", "日本", "the", "y x"])),
       max_length=st.integers(min_value=1, max_value=400))
def test_odd_text_gets_exactly_the_old_snippet(content: str, query: str | None, max_length: int) -> None:
    assert extract_snippet(content, query, max_length) == reference_extract_snippet(content, query, max_length)


def _note_of(rng: random.Random, size: int, vocabulary: Sequence[str]) -> str:
    """About `size` characters of paragraphs, headings, lists and code, from `vocabulary`."""
    parts: list[str] = []
    total = 0
    while total < size:
        kind = rng.random()
        if kind < 0.7:
            part = " ".join(" ".join(rng.choice(vocabulary) for _ in range(rng.randint(4, 18))).capitalize()
                            + rng.choice([".", ".", "!", "?"]) for _ in range(rng.randint(1, 7)))
        elif kind < 0.8:
            part = "## " + " ".join(rng.choice(vocabulary) for _ in range(3))
        elif kind < 0.9:
            part = "\n".join("- " + " ".join(rng.choice(vocabulary) for _ in range(5)) for _ in range(4))
        elif kind < 0.95:
            part = "```py\ndef " + rng.choice(vocabulary) + "(x):\n    return x\n```"
        else:
            part = "function " + rng.choice(vocabulary) + "(a) {\n  return a + 1;\n}"
        parts.append(part)
        total += len(part) + 2
    return "\n\n".join(parts)


@pytest.mark.slow  # a note at the size limit, through both implementations
def test_a_note_just_under_the_limit_gets_exactly_the_old_snippet() -> None:
    rng = random.Random(4)
    vocabulary = [w for w in WORDS if w.isascii()] + [f"w{i}" for i in range(400)]
    content = _note_of(rng, EXACT_LIMIT - 2000, vocabulary)[:EXACT_LIMIT]
    for query in ["heap sort tree", "authentication token", "w17 w23", "zebra", None]:
        for max_length in (80, 300, 1000):
            assert extract_snippet(content, query, max_length) == \
                reference_extract_snippet(content, query, max_length), (query, max_length)


@settings(max_examples=examples(300), deadline=None)
@given(text=st.lists(st.sampled_from(list("{}()[]\"'` \nx")), max_size=120).map("".join), data=st.data())
def test_remembered_bracket_matches_are_what_a_fresh_scan_finds(text: str, data: st.DataObject) -> None:
    openers = [i for i, ch in enumerate(text) if ch in "{(["]
    order = data.draw(st.one_of(st.just(openers), st.permutations(openers)))
    known: dict[int, int | None] = {}
    for i in order:
        assert _match_bracket(text, i, known) == reference_match_bracket(text, i)
    assert all(reference_match_bracket(text, i) == end for i, end in known.items())


# --- notes longer than EXACT_LIMIT: sensible, bounded -----------------------------------------------

LOG_WORDS = ["alpha", "beta", "gamma", "delta", "heap", "sort", "tree", "graph", "node", "edge", "prime", "number",
             "theory", "energy", "heat"]


def _big_note(seed: int = 1, lines: int = 36000) -> str:
    """A large note: lines of 12 random words, a heading every 500 lines (~2.5 MB)."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(lines):
        out.append(" ".join(rng.choice(LOG_WORDS) for _ in range(12)) + ".")
        if i % 500 == 0:
            out.append(f"\n## Section {i}\n")
    return "\n".join(out)


BIG = _big_note()


def _parts(snippet: str) -> list[str]:
    return snippet.removesuffix(" …").split(NEW_SEPARATOR)


def test_a_large_note_gets_a_bounded_snippet_of_its_matching_text() -> None:
    assert len(BIG) > 2_000_000
    for max_length in (1, 20, 80, 300, 1000, 5000):
        snippet = extract_snippet(BIG, "heap sort tree", max_length)
        assert len(snippet) <= max_length
        for part in _parts(snippet):
            assert part in BIG
        if max_length >= 80:
            assert {"heap", "sort", "tree"} <= set(tokenize(snippet))


def test_a_rare_term_deep_in_a_large_note_is_found() -> None:
    at = BIG.index("\n", int(len(BIG) * 0.7))
    content = BIG[:at] + "\n\nThe zebra crossing is where the heap was sorted.\n\n" + BIG[at:]
    snippet = extract_snippet(content, "zebra heap", 300)
    assert "The zebra crossing is where the heap was sorted." in snippet
    assert len(snippet) <= 300


def test_a_word_inside_other_words_does_not_stand_for_the_term() -> None:
    filler = "A cheap trick, cheaply done, and cheaper still: the cheapest.\n" * 40000
    content = filler + "\nThe binary heap lives here.\n" + filler[:100000]
    assert len(content) > 2_000_000
    assert "The binary heap lives here." in extract_snippet(content, "heap", 300)


def test_a_large_note_without_a_match_starts_at_its_beginning() -> None:
    assert extract_snippet(BIG, "zebra", 300) == extract_snippet(BIG, None, 300)
    assert extract_snippet(BIG, "zebra", 300).startswith(BIG[:40])


def test_a_large_note_beyond_ascii() -> None:
    rng = random.Random(3)
    sentences = ["東京は日本の首都です。", "大阪は大きな都市です。", "Le café est naïf. ", "ｈｅａｐ ｓｏｒｔ. "]
    body = "".join(rng.choice(sentences) for _ in range(150000))
    content = body + "京都には多くの寺があります。" + body[:3000]
    assert len(content) > EXACT_LIMIT
    snippet = extract_snippet(content, "京都 寺", 100)
    assert "京都には多くの寺があります。" in snippet and len(snippet) <= 100
    snippet = extract_snippet(content, "heap", 100)  # the fullwidth letters, as `tokenize` reads them
    assert "ｈｅａｐ" in snippet and len(snippet) <= 100


def test_a_large_note_of_unclosed_code_is_bounded() -> None:
    content = "function f() {\n  log(heap)\n" * 150000
    snippet = extract_snippet(content, "heap log", 300)
    assert "heap" in snippet and len(snippet) <= 300
