"""The fake's offline answers quote what a sensible extractive answerer would: on topic, never front matter.

The README's quick start asks the fixture vault "How does heapsort work?"; the fake's answer is the first
thing a new user sees. These tests read the fixture notes themselves (not the note index's selection, which
has its own tests) and ask the fake the way `ask` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlmsync.fake import FakeNotebookLM
from nlmsync.fake.answers import compose_answer, notes_of, split_passages
from nlmsync.sync.packs.text import compose_pack
from nlmsync.vault import parse_front_matter

FIXTURE_VAULT = Path(__file__).resolve().parents[2] / "fixtures" / "vault"
HEAPSORT = "algorithms/sorting/heapsort.md"
THERMODYNAMICS = "physics/thermodynamics.md"
# The notes the quick start's question selects from the fixture vault (`ask` uploads them as the sources).
QUICK_START_NOTES = [HEAPSORT, "Home.md", THERMODYNAMICS, "algorithms/complexity.md"]


def note(path: str) -> tuple[str, str]:
    return path, (FIXTURE_VAULT / path).read_text(encoding="utf-8")


def all_notes() -> list[tuple[str, str]]:
    notes = []
    for path in sorted(FIXTURE_VAULT.rglob("*.md")):
        rel = path.relative_to(FIXTURE_VAULT).as_posix()
        if rel.startswith((".", "quirks/")):
            continue
        notes.append(note(rel))
    return notes


def front_matter_lines(sources: list[tuple[str, str]]) -> set[str]:
    """Every line of every source's front matter, its `---` fences included."""
    lines: set[str] = set()
    for _, text in sources:
        block = text[:parse_front_matter(text).body_start]
        lines.update(line.strip() for line in block.splitlines() if line.strip())
    return lines


def headings(text: str) -> set[str]:
    """The note's ATX headings as written, and the words of its setext ones."""
    lines = text.splitlines()
    found = {line.strip() for line in lines if line.lstrip().startswith("#")}
    found.update(lines[i - 1].strip() for i, line in enumerate(lines)
                 if i and line.strip() and set(line.strip()) <= {"=", "-"} and lines[i - 1].strip())
    return found


def assert_quotes_no_front_matter_or_bare_heading(result: dict, sources: list[tuple[str, str]]) -> None:
    fences = front_matter_lines(sources)
    texts = dict(sources)
    for ref in result["references"]:
        cited = ref["cited_text"]
        assert not cited.startswith("---"), cited
        assert not any(line in cited for line in fences if line != "---" and len(line) > 3), cited
        assert cited not in headings(texts[ref["source_id"]]), cited


@pytest.mark.parametrize("sources", [[note(p) for p in QUICK_START_NOTES], all_notes()],
                         ids=["quick-start-notes", "whole-vault"])
def test_the_quick_start_question_quotes_heapsort_first_and_no_front_matter(sources) -> None:
    result = compose_answer("How does heapsort work?", sources)
    assert result["references"], result
    assert result["references"][0]["source_id"] == HEAPSORT
    assert result["citations"]["1"] == HEAPSORT
    assert result["sources_used"][0] == HEAPSORT
    assert_quotes_no_front_matter_or_bare_heading(result, sources)
    # "work" is all the physics note shares with the question ("heat and work are two ways to move it")
    assert THERMODYNAMICS not in result["sources_used"]
    # and the answer explains how it works, from the section that says so
    assert "max-heap" in result["answer"]


def test_the_quick_start_through_the_fake_server_cites_heapsort_first() -> None:
    fake = FakeNotebookLM()
    nb = fake.apply("notebook_create", {"title": "Demo"})["notebook_id"]
    ids = {}
    for path in QUICK_START_NOTES:
        _, text = note(path)
        added = fake.apply("source_add", {"notebook_id": nb, "source_type": "text", "text": text,
                                          "title": f"{path} · 0000"})
        ids[added["source_id"]] = path
    result = fake.apply("notebook_query", {"notebook_id": nb, "query": "How does heapsort work?"})
    assert result["status"] == "success"
    assert [ids[s] for s in result["sources_used"]] == [HEAPSORT]
    assert ids[result["citations"]["1"]] == HEAPSORT
    for ref in result["references"]:
        assert set(ref) == {"source_id", "citation_number", "cited_text"}
        assert f"> {ref['cited_text']} [{ref['citation_number']}]" in result["answer"]


@pytest.mark.parametrize(("question", "notes", "on_topic"), [
    # every word of the question is in the heapsort note ("heapsort" its title, "work" a heading)
    ("How does heapsort work?", QUICK_START_NOTES, HEAPSORT),
    # the quicksort note never says "work": the question is about quicksort all the same
    ("How does quicksort work?", ["algorithms/sorting/quicksort.md", THERMODYNAMICS],
     "algorithms/sorting/quicksort.md"),
])
def test_a_note_sharing_only_a_common_word_is_not_quoted(question, notes, on_topic) -> None:
    sources = [note(p) for p in notes]
    result = compose_answer(question, sources)
    assert result["sources_used"][0] == on_topic
    # the physics note has "work" ("heat and work are two ways to move it") and nothing else of the question
    assert THERMODYNAMICS not in result["sources_used"]
    assert_quotes_no_front_matter_or_bare_heading(result, sources)


def test_a_short_off_topic_note_with_the_rarer_word_is_not_quoted() -> None:
    # Among the passages "sourdough" is common and "bake" rare (one line in the recipe, one in the sale note):
    # by IDF alone the short bake sale note is the better match for "bake", and the sources tie on it.
    recipe = ("# Sourdough\n\nA sourdough loaf needs a lively starter that doubles in four to six hours.\n\n"
              "## Shaping\n\nShape the sourdough tightly and retard it in the fridge overnight.\n\n"
              "## Baking\n\nBake the sourdough in a Dutch oven: twenty minutes with the lid, twenty-five without.\n\n"
              "## Crumb\n\nA dense sourdough crumb usually means under-fermentation.\n")
    sale = "Remember the school bake sale on Saturday."
    inbox = "- Check whether the sourdough starter survived the trip.\n- Buy flour."
    sources = [("s-sale", sale), ("s-recipe", recipe), ("s-inbox", inbox)]
    result = compose_answer("How long do I bake sourdough?", sources)
    assert result["sources_used"] == ["s-recipe"]
    assert result["references"][0]["cited_text"].startswith("Bake the sourdough in a Dutch oven")
    assert compose_answer("When is the bake sale?", sources)["sources_used"] == ["s-sale"]


@pytest.mark.parametrize(("question", "path", "words"), [
    ("김치찌개 만드는 법", "cooking/kimchi-jjigae.md", "냄비에 돼지고기를"),
    ("ヒープソートの手順", "アルゴリズム/ヒープソート.md", "配列を最大ヒープにする"),
    ("京都 二日目", "travel/京都旅行.md", "嵐山の竹林"),
])
def test_cjk_questions_quote_their_note_and_no_front_matter(question, path, words) -> None:
    sources = all_notes()
    result = compose_answer(question, sources)
    assert result["references"][0]["source_id"] == path
    assert any(words in ref["cited_text"] for ref in result["references"])
    assert_quotes_no_front_matter_or_bare_heading(result, sources)


def test_answers_are_deterministic() -> None:
    sources = all_notes()
    first = compose_answer("How does heapsort work?", sources)
    assert compose_answer("How does heapsort work?", list(sources)) == first


WORDS = ["heap", "sort", "stable", "pivot", "merge", "kimchi", "stew", "oven"]
word = st.sampled_from(WORDS)
words = st.lists(word, min_size=1, max_size=6).map(" ".join)


@st.composite
def markdown_notes(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A note with front matter and headings of both kinds, and the paragraphs it says (the only quotable text)."""
    parts = [f"---\ntitle: {draw(words)}\naliases: [{draw(words)}]\ntags: [{draw(word)}]\n---"]
    paragraphs: list[str] = []
    for kind in draw(st.lists(st.sampled_from(["atx", "setext", "paragraph"]), max_size=6)):
        text = draw(words)
        if kind == "atx":
            parts.append(f"{'#' * draw(st.integers(1, 6))} {text}")
        elif kind == "setext":
            parts.append(f"{text}\n{draw(st.sampled_from(['===', '---']))}")
        else:
            parts.append(f"{text}.")
            paragraphs.append(f"{text}.")
    return "\n\n".join(parts) + "\n", paragraphs


@given(st.lists(markdown_notes(), min_size=1, max_size=3), words)
def test_only_paragraphs_are_ever_quoted(notes: list[tuple[str, list[str]]], question: str) -> None:
    sources = [(f"s{i}", text) for i, (text, _) in enumerate(notes)]
    for (source_id, text), (_, paragraphs) in zip(sources, notes, strict=True):
        assert [p.text for p in split_passages(source_id, text)] == paragraphs
    result = compose_answer(question, sources)
    quotable = {(source_id, p) for (source_id, _), (_, paragraphs) in zip(sources, notes, strict=True)
                for p in paragraphs}
    for ref in result["references"]:
        assert (ref["source_id"], ref["cited_text"]) in quotable


def packed(notes: list[tuple[str, str]], packs: int) -> list[tuple[str, str]]:
    """The notes in `packs` sources of consecutive notes, each as `refresh --all` packs them (`# path` headings)."""
    size = -(-len(notes) // packs)
    return [(f"pack-{i}", compose_pack(notes[i * size:(i + 1) * size])) for i in range(packs)]


def test_a_packed_notebook_is_answered_from_the_note_that_answers_the_question() -> None:
    """The quick start's question over the fixture vault mirrored in packs: the answer leads with the heapsort
    note, as it does with one note a source (a pack holds notes on every topic: weighed as one source, it
    let the words of other notes in it lead the answer)."""
    notes = all_notes()
    result = compose_answer("How does heapsort work?", packed(notes, 3))
    heapsort = " ".join(dict(notes)[HEAPSORT].split())
    assert result["references"] and result["references"][0]["cited_text"] in heapsort
    assert "max-heap" in result["answer"]
    cited_notes = [path for ref in result["references"] for path, text in notes if ref["cited_text"] in " ".join(text.split())]
    assert THERMODYNAMICS not in cited_notes


@pytest.mark.parametrize("question", ["How does heapsort work?", "How does quicksort work?", "김치찌개 만드는 법",
                                      "ヒープソートの手順", "How long do I bake sourdough?", "git rebase onto main"])
@pytest.mark.parametrize("packs", [1, 4])
def test_packed_or_not_a_question_quotes_the_same_passages(question: str, packs: int) -> None:
    notes = all_notes()
    alone = compose_answer(question, notes)
    together = compose_answer(question, packed(notes, packs))
    assert [ref["cited_text"] for ref in together["references"]] == [ref["cited_text"] for ref in alone["references"]]
    assert together["references"], question


def test_a_pack_is_read_note_by_note() -> None:
    notes = [("a.md", "---\ntitle: Heaps\n---\n# Heapsort\n\nIt sifts down.\n"), ("b/c.md", "Plain words.")]
    assert notes_of(compose_pack(notes)) == ["---\ntitle: Heaps\n---\n# Heapsort\n\nIt sifts down.\n", "Plain words.\n"]
    assert [p.text for p in split_passages("s", compose_pack(notes))] == ["It sifts down.", "Plain words."]
    assert notes_of("# A title\n\nText.\n") == ["# A title\n\nText.\n"]  # a heading that names no note: one note
