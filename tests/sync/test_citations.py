"""Placing a quoted passage in the notes of a pack: which note holds it, and where."""

from __future__ import annotations

from nlmsync.sync.citations import find_cited_note


def test_a_quote_that_ends_where_a_longer_sentence_of_an_earlier_note_goes_on_is_placed_in_the_note_that_ends_there():
    earlier = "# npm restart\n\n> This command is an alias of `npm run restart`.\n"
    later = "# npm run-script\n\n> This command is an alias of `npm run`.\n"
    quote = "> This command is an alias of `npm run`."
    assert find_cited_note([earlier, later], quote) == (1, later.index("This command"))


def test_a_quote_whose_punctuation_the_server_changed_is_still_placed_by_its_words():
    note = "# Sorting\n\nHeapsort builds a heap; then it swaps the root away.\n"
    assert find_cited_note(["# Other\n\nnothing here\n", note], "Heapsort builds a heap, then it swaps") == (
        1, note.index("Heapsort"))
