"""Analysis of a note's text, below search and reading: the tokenizer (`tokens`: a text's tokens; `fold`: many
texts' at once, with numpy), front matter, a text's lines, its links (`links`), its language (`language`), and
the admission rule for notes (`admission`).

The names below are the package's public surface, imported on first use: a process that only tokenizes a query
loads neither numpy nor YAML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from nlmsync._lazy import lazy_exports

if TYPE_CHECKING:
    from nlmsync.text.admission import Admission, admit_note
    from nlmsync.text.fold import FoldTexts
    from nlmsync.text.front_matter import (
        FrontMatter,
        front_matter_end,
        front_matter_strings,
        opted_out,
        parse_front_matter,
    )
    from nlmsync.text.language import question_language, text_language
    from nlmsync.text.lines import iter_lines
    from nlmsync.text.links import LINK_PATTERN, Link, attachment_links, link_matches
    from nlmsync.text.tokens import (
        CJK,
        JOINING_MARKS,
        MARK,
        MAX_TOKEN_LENGTH,
        PIECE_CHARS,
        SPACE,
        WORD,
        base_tokens,
        base_tokens_and_joins,
        cjk_bigrams,
        class_bits,
        compound_tokens,
        count_tokens,
        count_tokens_and_words,
        gap_joins,
        normalize,
        text_pieces,
        tokenize,
        tokens_and_words,
        word_character_runs,
        word_characters,
        words,
        words_and_gaps,
        words_and_joins,
    )

_EXPORTS = {
    "LINK_PATTERN": "nlmsync.text.links",
    "Link": "nlmsync.text.links",
    "attachment_links": "nlmsync.text.links",
    "link_matches": "nlmsync.text.links",
    "Admission": "nlmsync.text.admission",
    "CJK": "nlmsync.text.tokens",
    "FoldTexts": "nlmsync.text.fold",
    "FrontMatter": "nlmsync.text.front_matter",
    "JOINING_MARKS": "nlmsync.text.tokens",
    "MARK": "nlmsync.text.tokens",
    "MAX_TOKEN_LENGTH": "nlmsync.text.tokens",
    "PIECE_CHARS": "nlmsync.text.tokens",
    "SPACE": "nlmsync.text.tokens",
    "WORD": "nlmsync.text.tokens",
    "admit_note": "nlmsync.text.admission",
    "base_tokens": "nlmsync.text.tokens",
    "base_tokens_and_joins": "nlmsync.text.tokens",
    "cjk_bigrams": "nlmsync.text.tokens",
    "class_bits": "nlmsync.text.tokens",
    "compound_tokens": "nlmsync.text.tokens",
    "count_tokens": "nlmsync.text.tokens",
    "count_tokens_and_words": "nlmsync.text.tokens",
    "front_matter_end": "nlmsync.text.front_matter",
    "front_matter_strings": "nlmsync.text.front_matter",
    "gap_joins": "nlmsync.text.tokens",
    "iter_lines": "nlmsync.text.lines",
    "normalize": "nlmsync.text.tokens",
    "opted_out": "nlmsync.text.front_matter",
    "parse_front_matter": "nlmsync.text.front_matter",
    "question_language": "nlmsync.text.language",
    "text_language": "nlmsync.text.language",
    "text_pieces": "nlmsync.text.tokens",
    "tokenize": "nlmsync.text.tokens",
    "tokens_and_words": "nlmsync.text.tokens",
    "word_character_runs": "nlmsync.text.tokens",
    "word_characters": "nlmsync.text.tokens",
    "words": "nlmsync.text.tokens",
    "words_and_gaps": "nlmsync.text.tokens",
    "words_and_joins": "nlmsync.text.tokens",
}

__all__ = [
    "CJK",
    "JOINING_MARKS",
    "MARK",
    "MAX_TOKEN_LENGTH",
    "PIECE_CHARS",
    "SPACE",
    "WORD",
    "Admission",
    "FoldTexts",
    "FrontMatter",
    "LINK_PATTERN",
    "Link",
    "admit_note",
    "attachment_links",
    "base_tokens",
    "base_tokens_and_joins",
    "cjk_bigrams",
    "class_bits",
    "compound_tokens",
    "count_tokens",
    "count_tokens_and_words",
    "front_matter_end",
    "front_matter_strings",
    "gap_joins",
    "iter_lines",
    "link_matches",
    "normalize",
    "opted_out",
    "parse_front_matter",
    "question_language",
    "text_language",
    "text_pieces",
    "tokenize",
    "tokens_and_words",
    "word_character_runs",
    "word_characters",
    "words",
    "words_and_gaps",
    "words_and_joins",
]

__getattr__, __dir__ = lazy_exports(globals(), _EXPORTS, __all__)
