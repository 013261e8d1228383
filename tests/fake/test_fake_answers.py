"""Offline answers quote the passages that best match the question, cited like the real server."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from nlmsync.fake.answers import MAX_PASSAGE_WORDS, NO_ANSWER, compose_answer, split_passages

HEAPSORT = ("Heapsort builds a binary heap and repeatedly extracts the maximum.\n\n"
            "It runs in O(n log n) time and sorts in place.")
QUICKSORT = "Quicksort picks a pivot and partitions the array around it.\n\nIts worst case is quadratic."
GARDEN = "Tomatoes need full sun and regular watering."


def test_best_passage_is_quoted_and_cited() -> None:
    result = compose_answer("how does heapsort use a binary heap?",
                            [("s-heap", HEAPSORT), ("s-quick", QUICKSORT), ("s-garden", GARDEN)])
    first = result["references"][0]
    assert first == {"source_id": "s-heap", "citation_number": 1,
                     "cited_text": "Heapsort builds a binary heap and repeatedly extracts the maximum."}
    assert result["citations"]["1"] == "s-heap"
    assert "s-garden" not in result["sources_used"]
    assert f"> {first['cited_text']} [1]" in result["answer"]
    assert set(result["citations"].values()) == set(result["sources_used"])
    assert [r["citation_number"] for r in result["references"]] == list(range(1, len(result["references"]) + 1))


def test_a_rare_word_in_an_off_topic_source_does_not_lead_the_answer() -> None:
    # Within the passages, "heapsort" is common (low IDF) and "work" rare: without weighting passages by
    # their source, the physics line about "work" would be quoted first for a heapsort question.
    paragraphs = [
        "Heapsort sorts an array in place, in O(n log n) time, worst case included, with constant extra memory.",
        "Heapsort first rearranges the array into a max-heap by sifting down every internal node in turn.",
        "## How does it work?\n\nThe root holds the largest key; the sort swaps it to the end and repairs the heap.",
        "Heapsort is not stable: equal keys can change their relative order during the sift-down steps.",
        "Introsort falls back to heapsort when quicksort recursion gets too deep on adversarial inputs.",
        "Heapsort has poor cache behaviour compared with quicksort, so it is usually slower in practice."]
    heapsort = "\n\n".join(paragraphs)
    physics = "The first law: heat and work are two ways to move energy."
    result = compose_answer("how does heapsort work", [("s-physics", physics), ("s-heap", heapsort)])
    assert result["references"][0]["source_id"] == "s-heap"
    assert result["sources_used"][0] == "s-heap"
    on_topic = compose_answer("first law of thermodynamics", [("s-physics", physics), ("s-heap", heapsort)])
    assert on_topic["sources_used"] == ["s-physics"]


def test_no_match_cites_nothing() -> None:
    result = compose_answer("photosynthesis chlorophyll", [("s-heap", HEAPSORT)])
    assert result == {"answer": NO_ANSWER, "sources_used": [], "citations": {}, "references": []}


def test_long_paragraphs_are_split_into_sentence_windows() -> None:
    sentence = "Word " * 49 + "end."
    passages = split_passages("s", " ".join([sentence] * 6))
    assert len(passages) > 1
    assert all(len(p.text.split()) <= MAX_PASSAGE_WORDS for p in passages)
    assert " ".join(p.text for p in passages).split() == " ".join([sentence] * 6).split()


def test_blank_text_has_no_passages() -> None:
    assert split_passages("s", " \n\n \n") == []


def test_headings_are_the_context_of_the_paragraphs_under_them_not_passages() -> None:
    text = ("---\ntitle: Heap notes\ntags: [algorithms]\n---\n# Heapsort\n\nIt builds a heap.\n\n"
            "Sifting\n-------\nEach node sinks.\n\n```python\ndef sift():\n\n    pass\n```\n\n## Trailing heading\n")
    passages = split_passages("s", text)
    assert [(p.text, p.context) for p in passages] == [
        ("It builds a heap.", ("Heap notes", "Heapsort")),  # the front matter title and a heading before any text
        ("Each node sinks.", ("Heap notes", "Heapsort", "Sifting")),
        ("```python def sift(): pass ```", ("Heap notes", "Heapsort", "Sifting")),  # a fence stays whole
    ]


@given(st.lists(st.tuples(st.sampled_from(["s1", "s2", "s3"]),
                          st.text(alphabet="abc heap sort.\n", max_size=300)), max_size=4),
       st.text(alphabet="abc heap sort ", max_size=30))
def test_answers_are_always_consistently_cited(sources: list[tuple[str, str]], question: str) -> None:
    result = compose_answer(question, sources)
    numbers = [r["citation_number"] for r in result["references"]]
    assert numbers == list(range(1, len(numbers) + 1))
    assert result["citations"] == {str(r["citation_number"]): r["source_id"] for r in result["references"]}
    assert result["sources_used"] == list(dict.fromkeys(r["source_id"] for r in result["references"]))
    for ref in result["references"]:
        texts = [p.text for sid, text in sources if sid == ref["source_id"] for p in split_passages(sid, text)]
        assert ref["cited_text"] in texts
        assert f"[{ref['citation_number']}]" in result["answer"]


PLANETS = ("# Planets\n\nThe inner planets, by distance:\n| Planet | Moons | Day length |\n| :--- | ---: | --- |\n"
           "| Mercury | 0 | 59 days |\n| Venus | 0 | 243 days |\n| Earth | 1 | 24 hours |\n")


def test_a_table_is_quoted_as_a_table() -> None:
    passages = split_passages("s", PLANETS)
    assert [p.text for p in passages] == [
        "The inner planets, by distance:",
        "| Planet | Moons | Day length |\n| :--- | ---: | --- |\n| Mercury | 0 | 59 days |\n| Venus | 0 | 243 days |\n"
        "| Earth | 1 | 24 hours |"]
    answer = compose_answer("How many moons does Venus have, and how long is its day?", [("s", PLANETS)])["answer"]
    assert "> | Planet | Moons | Day length |\n> | :--- | ---: | --- |\n> | Mercury | 0 | 59 days |\n" in answer
    assert re.search(r"\| Earth \| 1 \| 24 hours \|\n>\n> \[1\]", answer)


def test_a_long_table_is_quoted_in_windows_of_whole_rows_each_under_its_header() -> None:
    rows = [f"| row {i} | {' '.join(['word'] * 10)} |" for i in range(40)]
    table = "\n".join(["| Name | Text |", "| --- | --- |", *rows])
    passages = split_passages("s", table)
    assert len(passages) > 1
    for passage in passages:
        lines = passage.text.split("\n")
        assert lines[:2] == ["| Name | Text |", "| --- | --- |"] and len(passage.text.split()) <= MAX_PASSAGE_WORDS
    assert [line for p in passages for line in p.text.split("\n")[2:]] == rows


def test_an_answer_quotes_the_notes_in_the_questions_language_where_the_notebook_has_them() -> None:
    english = "# Embed files\n\nTo embed a file in a note, add an exclamation mark before a link to it.\n"
    greek = ("# Ενσωμάτωση αρχείων\n\nΓια να ενσωματώσετε ένα αρχείο σε μια σημείωση, προσθέστε ένα θαυμαστικό "
             "πριν από έναν σύνδεσμο προς αυτό: embed file note.\n")
    answer = compose_answer("How do I embed a file in a note?", [("el", greek), ("en", english)])
    assert {ref["source_id"] for ref in answer["references"]} == {"en"}
