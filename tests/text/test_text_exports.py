"""The package exports exactly the documented names, each the thing itself (not a submodule of the same name),
and importing it loads none of its modules: a query's tokens load neither numpy nor YAML."""

from __future__ import annotations

import subprocess
import sys
import types

from nlmsync import text


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(text.__all__) == [
        "Admission", "CJK", "FoldTexts", "FrontMatter", "JOINING_MARKS", "LINK_PATTERN", "Link", "MARK",
        "MAX_TOKEN_LENGTH", "PIECE_CHARS", "SPACE", "WORD", "admit_note", "attachment_links", "base_tokens", "base_tokens_and_joins", "cjk_bigrams", "class_bits",
        "compound_tokens", "count_tokens", "count_tokens_and_words", "front_matter_end", "front_matter_strings",
        "gap_joins", "iter_lines", "link_matches", "normalize", "opted_out", "parse_front_matter",
        "question_language", "text_language", "text_pieces", "tokenize",
        "tokens_and_words", "word_character_runs", "word_characters", "words", "words_and_gaps", "words_and_joins",
    ]
    for name in text.__all__:
        value = getattr(text, name)
        assert not isinstance(value, types.ModuleType), name


def test_tokenizing_a_query_loads_neither_numpy_nor_yaml_nor_regex() -> None:
    code = ("import sys\nfrom nlmsync.text import tokenize\n"
            "assert tokenize('How does heapsort work?') == ['how', 'does', 'heapsort', 'work', 'howdoes', "
            "'doesheapsort', 'heapsortwork']\n"
            "print(sorted(m for m in ('numpy', 'yaml', 'regex') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "[]"), done.stderr
