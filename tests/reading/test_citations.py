"""Placing a quoted passage in the notes of a pack: which note holds it, and where."""

from __future__ import annotations

from nlmsync.reading.citations import find_cited_note


def test_a_quote_that_ends_where_a_longer_sentence_of_an_earlier_note_goes_on_is_placed_in_the_note_that_ends_there():
    earlier = "# npm restart\n\n> This command is an alias of `npm run restart`.\n"
    later = "# npm run-script\n\n> This command is an alias of `npm run`.\n"
    quote = "> This command is an alias of `npm run`."
    assert find_cited_note([earlier, later], quote)[0] == 1
    assert find_cited_note([earlier, later], quote.replace("`", "").replace(">", ""))[0] == 1  # as the server cleans it


def test_a_quote_whose_punctuation_the_server_changed_is_still_placed_by_its_words():
    note = "# Sorting\n\nHeapsort builds a heap; then it swaps the root away.\n"
    assert find_cited_note(["# Other\n\nnothing here\n", note], "Heapsort builds a heap, then it swaps") == (
        1, note.index("Heapsort"))


def test_a_quote_the_server_gave_verbatim_is_placed_in_the_note_that_holds_it_verbatim():
    comma = "# ,\n\n> This command is an alias of `,`.\n"
    bracket = "# [\n\n> This command is an alias of `[`.\n"
    quote = "> This command is an alias of `[`."
    assert find_cited_note([comma, bracket], quote) == (1, bracket.index("> This"))


def test_a_path_heading_shared_by_the_words_of_two_paths_is_placed_only_when_one_is_written_as_quoted():
    paths, texts = ["a/b-c.md", "a/b c.md"], ["# B\n\nfirst\n", "# C\n\nsecond\n"]
    assert find_cited_note(texts, "# a/b c.md", paths) == (1, 0)
    assert find_cited_note(texts, "a b c md", paths) is None  # either: not guessed


def test_a_verbatim_quote_is_not_placed_inside_a_longer_word_of_an_earlier_note():
    earlier = "# Heaps\n\nA minheap sort for it works too.\n"
    later = "# Sorting\n\nUse heap sort for it when memory is short.\n"
    assert find_cited_note([earlier, later], "heap sort for it") == (1, later.index("heap sort"))
    assert find_cited_note([later, "# Other\n\nsome heap sorts\n"], "heap sort") == (0, later.index("heap sort"))


def test_a_quote_placed_by_its_words_is_not_placed_inside_a_longer_word_of_an_earlier_note():
    # the markdown marks keep the quote from being found verbatim: it is placed by its words, each whole
    earlier = "# Heaps\n\nA minheap sort for it is fast.\n"
    later = "# Sorting\n\nA **heap sort** for it is fast.\n"
    assert find_cited_note([earlier, later], "heap sort for it is fast") == (1, later.index("heap"))


def test_of_several_notes_holding_a_quote_the_preferred_one_is_named_whatever_their_order():
    english, greek = "# Embed\n\nUse `![[file]]` to embed.\n", "# Ενσωμάτωση\n\nUse `![[file]]` to embed.\n"
    quote = "Use `![[file]]` to embed."
    assert find_cited_note([greek, english], quote) == (0, greek.index("Use"))
    assert find_cited_note([greek, english], quote, prefer=lambda i: i != 1) == (1, english.index("Use"))
    assert find_cited_note([greek, english], quote.replace("`", ""), prefer=lambda i: i != 1)[0] == 1
