"""The pure branch decision of source preparation and conversation carry-over, without a disk or a server."""

from __future__ import annotations

from nlmsync.sync.branches import Branch
from nlmsync.sync.carry_over import history_source_ids
from nlmsync.sync.branches import decide_branch
from nlmsync.sync.prepared import prepare_note
from nlmsync.sync.registry import ResolvedMapping


def rows(*specs):
    return [ResolvedMapping(i, sid, h, stored or sid) for i, (sid, h, stored) in enumerate(specs)]


def test_reuse_when_live_and_hash_equal():
    d = decide_branch(["h1"], rows(("s1", "h1", None)), {"s1"})
    assert d.branch == Branch.REUSED and d.keep == ("s1",) and not d.canonicalize


def test_reuse_canonicalizes_an_alias():
    d = decide_branch(["h1"], rows(("s2", "h1", "s1")), {"s2"})
    assert d.branch == Branch.REUSED and d.keep == ("s2",) and d.canonicalize


def test_replace_when_hash_differs():
    d = decide_branch(["h2"], rows(("s1", "h1", None)), {"s1"})
    assert d.branch == Branch.REPLACED and d.previous == ("s1",) and d.prior_part_ids == ("s1",)


def test_replace_when_split_changes():
    d = decide_branch(["h1", "h2"], rows(("s1", "h1", None)), {"s1"})
    assert d.branch == Branch.REPLACED


def test_new_with_prior_stale_mapping_keeps_it_for_aliasing():
    d = decide_branch(["h2"], rows(("gone", "h1", None)), {"other"})
    assert d.branch == Branch.ADDED and d.previous == () and d.prior_part_ids == ("gone",)


def test_rename_by_hash_from_vanished_path():
    cand = [("old.md", rows(("s9", "h1", None)))]
    d = decide_branch(["h1"], [], {"s9"}, cand)
    assert d.branch == Branch.RENAMED and d.rename_from == "old.md" and d.keep == ("s9",)


def test_no_rename_when_candidate_source_is_gone_or_hash_differs():
    assert decide_branch(["h1"], [], {"x"}, [("old.md", rows(("s9", "h1", None)))]).branch == Branch.ADDED
    assert decide_branch(["h1", "h2"], [], {"s9"}, [("old.md", rows(("s9", "h1", None)))]).branch == Branch.ADDED


def test_live_mapping_wins_over_rename_candidate():
    d = decide_branch(["h1"], rows(("s1", "h0", None)), {"s1", "s9"}, [("old.md", rows(("s9", "h1", None)))])
    assert d.branch == Branch.REPLACED


def test_prepare_note_titles_parts():
    note = prepare_note("big.md", "a b c\n\nd e f\n\ng h i\n", max_words=3, max_bytes=100)
    assert [p.title.split(" · ")[0] for p in note.parts] == ["big.md (part 1/3)", "big.md (part 2/3)",
                                                             "big.md (part 3/3)"]
    assert len(set(note.hashes)) == 3


def test_carry_over_newest_first_resolved_remote_valid_dedup():
    aliases = {"old": "new"}
    records = [["a", "old"], ["new", "b", "gone"], ["c"]]
    got = history_source_ids(records, lambda s: aliases.get(s, s), {"a", "new", "b", "c"})
    assert got == ["a", "new", "b", "c"]


def test_carry_over_cap():
    records = [[f"s{i}-{j}" for j in range(10)] for i in range(10)]
    remote = {s for r in records for s in r}
    got = history_source_ids(records, lambda s: s, remote, cap=40)
    assert len(got) == 40 and got[:10] == records[0] and got[-1] == "s3-9"
    assert history_source_ids(records, lambda s: s, remote, cap=0) == []


def test_citation_heading_is_nearest_above_and_ignores_code_fences():
    from nlmsync.reading.citations import find_cited_text, heading_above

    text = "# Sorting\nintro\n## Heapsort\nBuild a max-heap,\nthen   swap.\n```\n# not a heading\n```\nlast line\n"
    offset = find_cited_text(text, "Build a max-heap, then swap.")
    assert offset == text.index("Build")
    assert heading_above(text, offset) == "Heapsort"
    assert heading_above(text, text.index("last line")) == "Heapsort"
    assert heading_above(text, text.index("intro")) == "Sorting"
    assert find_cited_text(text, "not in the note") is None


def test_citation_heading_understands_setext_headings_and_skips_front_matter():
    from nlmsync.reading.citations import heading_above

    text = ("---\ntitle: Physics\ntags: [a]\n---\nThermodynamics\n==============\n\nThe first law.\n\n"
            "Ideal gas\n---------\n\np V = n R T\n\n---\n\nafter a thematic break\n")
    assert heading_above(text, text.index("The first law")) == "Thermodynamics"
    assert heading_above(text, text.index("p V")) == "Ideal gas"
    assert heading_above(text, text.index("after a thematic")) == "Ideal gas"
    assert heading_above(text, text.index("tags")) is None  # front matter: neither heading nor body


def test_citation_headings_and_search_fields_agree_on_what_is_code():
    from nlmsync.reading.citations import heading_above
    from nlmsync.search.markdown import split_markdown

    # "```python" inside an open ``` fence does not close it: the line after is still code
    text = "# Setup\n```\n```python\n# not a heading\n```\nafter the fence\n"
    assert heading_above(text, text.index("after the fence")) == "Setup"
    assert split_markdown(text).heading == "Setup"
    assert "# not a heading" in split_markdown(text).body
