"""Query-aware snippet extraction (seed 004): the seed's examples, boundaries, Unicode, and bounds."""

from __future__ import annotations

import regex
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.hypothesis_profiles import examples

from nlmsync.reading.segments import segment_text
from nlmsync.reading.snippets import SEPARATOR, extract_snippet, match_terms
from nlmsync.search.query import query_terms

INTRO = ("This document starts with a long introduction about the history of the company and its many "
         "offices around the world, which is not relevant here at all. ") * 2
AUTH = ("Authentication uses JWT tokens signed with a rotating key. Each request carries the token in the "
        "Authorization header, and the server verifies the signature before anything else happens.")
CONCLUSION = ("In conclusion, the team meets every week to review progress and plan the next steps of the "
              "roadmap for the product. ") * 4
DOC = INTRO + "\n\n" + AUTH + "\n\n" + CONCLUSION

PYTHON = '''def helper(): pass

def authenticate_user(username, password):
    """Main authentication function"""
    if not valid(username, password):
        return None
    token = generate_jwt(username)
    return token

def other_func(): pass
'''

AUTH_FUNCTION = PYTHON[PYTHON.index("def authenticate_user"):PYTHON.index("\n\ndef other_func")]


def test_query_aware_beats_truncation() -> None:
    truncated = extract_snippet(DOC, None, 300)
    focused = extract_snippet(DOC, "authentication JWT", 300)
    assert "JWT" not in truncated
    assert focused == AUTH


def test_without_query_truncates_at_a_sentence_boundary() -> None:
    snippet = extract_snippet(DOC, None, 200)
    assert snippet.startswith("This document starts")
    assert snippet.endswith("at all. …")
    assert len(snippet) <= 200


def test_whole_python_function_is_kept() -> None:
    assert extract_snippet(PYTHON, "authenticate", 300) == AUTH_FUNCTION


def test_whole_brace_function_is_kept_with_nested_brackets() -> None:
    body = 'function login(user) {\n  if (user) { return check(user, "}"); }\n  return null;\n}'
    content = "Some unrelated prose about the weather.\n\n" + body + "\n\nMore text about nothing."
    assert extract_snippet(content, "login", 300) == body


def test_go_and_fenced_code_blocks_are_segments_of_their_own() -> None:
    go = "func (s *Server) Serve(addr string) error {\n\treturn listen(addr)\n}"
    fenced = "```sh\nnlmsync serve --transport http\n```"
    content = "Intro.\n\n" + go + "\n\nBetween.\n\n" + fenced + "\n\nEnd."
    code = [content[s.start:s.end] for s in segment_text(content, 300) if s.code]
    assert code == [go, fenced]


def test_multi_segment_join_in_reading_order() -> None:
    filler = "Lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt. " * 6
    content = ("Intro about auth.\n\n" + filler + "\n\nJWT tokens are used.\n\n" + filler
               + "\n\nThe token expiration is one hour.\n\n" + filler)
    snippet = extract_snippet(content, "auth JWT token expiration", 250)
    assert snippet == "Intro about auth." + SEPARATOR + "JWT tokens are used." + SEPARATOR + \
        "The token expiration is one hour."


def test_stop_words_do_not_pick_segments() -> None:
    content = ("The cat is on the mat and it is the best of the cats.\n\n" + "x " * 150
               + "\n\nHeapsort builds a heap first.")
    assert extract_snippet(content, "how does the heapsort work", 60) == "Heapsort builds a heap first."
    assert query_terms("what is the")[:3] == ["what", "is", "the"]
    assert "the" not in query_terms("the heapsort")


def test_prefix_matching_of_query_terms() -> None:
    assert match_terms(["authentication", "tokens", "au"], ["auth", "token"]) == ["auth", "token", "au"]


def test_cut_avoids_the_inside_of_brackets() -> None:
    content = ("Word " * 30) + "(a parenthetical remark that goes on and on for quite a while indeed) tail " * 3
    snippet = extract_snippet(content, None, 160)
    kept = snippet.removesuffix(" …")
    assert kept.count("(") == kept.count(")")


def test_cjk_query_and_sentences() -> None:
    content = "東京は日本の首都です。大阪は大きな都市です。京都には多くの寺があります。"
    assert extract_snippet(content, "京都", 20) == "京都には多くの寺があります。"


def test_front_matter_is_skipped() -> None:
    content = "---\ntitle: Heaps\ntags: [algo]\n---\n# Heaps\n\nA heap is a tree."
    assert extract_snippet(content, None, 100).startswith("# Heaps")


def test_empty_and_blank_content() -> None:
    assert extract_snippet("", "query", 50) == ""
    assert extract_snippet("   \n\n  ", None, 50) == ""


def test_grapheme_clusters_are_never_split() -> None:
    family = "👨\u200d👩\u200d👧"
    content = (family + "e\u0301") * 40
    snippet = extract_snippet(content, None, 30)
    kept = snippet.removesuffix(" …")
    graphemes = regex.findall(r"\X", content)
    assert kept and kept == "".join(graphemes[:len(regex.findall(r"\X", kept))])


@settings(max_examples=examples(150), deadline=None)
@given(content=st.lists(st.sampled_from(list("abc xyz.!?()[]{}\n\t:;\"'`é日本👍") + ["def f(x):\n  y", "\n\n"]),
                        max_size=400).map("".join),
       query=st.one_of(st.none(), st.sampled_from(["abc", "xyz f", "日本", "the", "y x"])),
       max_length=st.integers(min_value=1, max_value=400))
def test_snippet_is_bounded_and_made_of_the_content(content: str, query: str | None, max_length: int) -> None:
    snippet = extract_snippet(content, query, max_length)
    assert len(snippet) <= max_length
    for part in snippet.removesuffix(" …").split(SEPARATOR):
        assert part.removesuffix("…") in content
