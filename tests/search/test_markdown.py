"""Markdown fields: ATX/setext headings and front matter as heading text, the rest body."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.search import markdown
from nlmsync.search.markdown import note_fields, split_markdown, whole_fields
from nlmsync.text import base_tokens, normalize, tokenize

NOTE = """---
title: Heap notes
aliases: [binary heap, priority queue]
tags:
  - algorithms
author: Mina
nlmsync: true
---
# Heaps

Intro paragraph about sift down.

Setext title
============

Second level
------------

```python
# not a heading, this is code
heapq.heappush(items, x)
```

---

Text after a thematic break.
"""


def test_heading_text_collects_front_matter_and_both_heading_styles() -> None:
    parts = split_markdown(NOTE)
    assert parts.heading.split("\n") == ["Heap notes", "binary heap", "priority queue", "algorithms", "Heaps",
                                         "Setext title", "Second level"]


def test_body_keeps_code_and_other_front_matter_values() -> None:
    body = split_markdown(NOTE).body
    assert "# not a heading, this is code" in body
    assert "heapq.heappush(items, x)" in body
    assert "Mina" in body
    assert "Text after a thematic break." in body
    assert "Setext title" not in body
    assert "true" not in body.split()


def test_multi_line_paragraph_becomes_one_setext_heading() -> None:
    parts = split_markdown("first line\nsecond line\n===\nbody")
    assert parts.heading == "first line second line"
    assert parts.body == "body"


def test_tilde_fence_and_atx_closing_hashes() -> None:
    parts = split_markdown("## Title ##\n~~~\n# inside\n~~~\n#hashtag is body")
    assert parts.heading == "Title"
    assert "# inside" in parts.body
    assert "#hashtag is body" in parts.body


def test_note_fields_counts_tokens_per_field() -> None:
    fields = note_fields("algorithms/heap.md", "# Heap sort\n\nheap heap sort")
    assert fields.heading["heap"] == 1
    assert fields.body["heap"] == 2
    assert fields.path["heap"] == 1
    assert fields.lengths == (3, 3, 2)  # the body's words (not `heapheap`, `heapsort`), the others' tokens


def test_a_file_name_counts_at_least_one_token_in_the_path_length() -> None:
    """A name the tokenizer finds no word in is one word it cannot read: as long as a one-word name."""
    nameless, named = note_fields("pages/common/((.md", "x"), note_fields("pages/common/comma.md", "x")
    assert sum(nameless.path.values()) == 0 and nameless.name_words == 0
    assert nameless.lengths == named.lengths == (1, 0, 3)  # pages, common and the name
    assert note_fields("dnf-deplist.md", "x").lengths == (1, 0, 3)  # dnf, deplist, dnfdeplist


def test_the_body_length_counts_words_not_compounds_or_bigrams() -> None:
    fields = note_fields("n.md", "heap sort 堆排序")
    assert sum(fields.body.values()) == 6  # heap sort 堆排序 heapsort 堆排 排序
    assert fields.body_words == fields.lengths[0] == 3


def test_a_heading_repeating_the_file_name_is_not_counted_again() -> None:
    """The title heading is the file name said again: counted once, through the file name."""
    text = "---\ntitle: DNF Deplist\n---\n# dnf deplist\n\n## Deplist options\n"
    fields = note_fields("linux/dnf-deplist.md", text)
    assert fields.heading == Counter(tokenize("Deplist options"))
    assert fields.path["dnf"] == 1 and fields.name_words == 2
    assert note_fields("linux/dnf.md", "# dnf deplist\n").heading["dnf"] == 1  # more than the file name: kept


# lines of every kind the two ways of finding a note's fields tell apart (whole-note regex or line walk)
LINES = ["# Heap sort", "## Title ##", "#", "###### six ###", "####### seven is body", "#hashtag is body",
         "   # indented heading", "    # four spaces is body", "heap sort", "ヒープ ソート 堆排序", "Σ ΣΑΣ café",
         "", "  ", "- item `code`", "===", "---", "- - -", "```", "~~~python", "text\r", "a\u2028b", "x\x0cy",
         "   --- ", "  ===", "   ```", "a\x0bb", "a\x1cb", "a\x1db", "a\x1eb", "a\x85b", "a\u2029b",
         # fences: what opens one (at most three spaces in), what closes it (its mark, as long or longer, white space
         # around, however far in) and what does neither
         "````", "~~~", "```` ", "    ```", "\t```", "\u3000```\u3000", "\xa0~~~~", "``` ```", "```x```", "~~ ~",
         "``", "`` `", "~~~~~~ tilde", "```bash", "    # four spaces is body", "\x1f```"]


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=16), st.booleans())
def test_whole_note_fields_equal_the_line_walks(lines: list[str], front: bool) -> None:
    text = ("---\ntitle: Heap\nauthor: Mina\n---\n" if front else "") + "\n".join(lines)
    whole = note_fields("pages/ja/heap-sort.md", text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "WHOLE_FIELD_CHARS", -1)  # every note walked line by line
        walked = note_fields("pages/ja/heap-sort.md", text)
    parts = split_markdown(text)
    assert whole == walked
    assert whole.body == Counter(tokenize(parts.body))
    assert whole.body_words == len(base_tokens(normalize(parts.body)))
    not_title = [line for line in parts.heading.split("\n")
                 if base_tokens(normalize(line)) != ["heap", "sort"]]  # the title heading is left out
    assert whole.heading == Counter(tokenize("\n".join(not_title)))


def test_a_note_with_fenced_code_needs_no_line_walk() -> None:
    """Fenced code is body, its `#` lines and `---` lines too: a note with some is read whole, as the walk reads it."""
    text = "# Deploy\n\n```bash\n# not a heading\n---\n```\n## Steps\n~~~\n===\n"
    whole, walked = whole_fields(text), split_markdown(text)
    assert whole is not None and whole.heading == walked.heading == "Deploy\nSteps"
    assert "# not a heading\n---" in whole.body and Counter(tokenize(whole.body)) == Counter(tokenize(walked.body))
    assert whole_fields("text\n---\n```\ncode\n```\n") is None  # a setext underline outside the fence: walked


@pytest.mark.parametrize("closing", ["\u3000```\u3000", "\xa0````", "\x1f```", "        ```", "\t~~~", "``` ```"])
def test_fenced_code_closes_where_the_line_walk_closes_it(closing: str) -> None:
    """White space of any kind around a closing fence, however far in; a heading after it is a heading again."""
    opening = "~~~" if "~" in closing else "```"
    text = f"{opening}\n# in code\n{closing}\n# After\nbody\n"
    whole = note_fields("x.md", text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(markdown, "WHOLE_FIELD_CHARS", -1)  # walked line by line
        assert whole == note_fields("x.md", text)
    assert whole_fields(text) is not None and (whole.heading["after"] == 1) == (closing != "``` ```")
