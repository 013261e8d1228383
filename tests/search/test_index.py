"""The note index over the fixture vault: ranking, the dirty model and incremental sync."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from nlmsync.config import Settings
from nlmsync.search.index import NoteIndex
from nlmsync.search.selection import separated

# a tldr alias page in Japanese ("This command is an alias of `{}`." and how to see the original's page)
ALIAS_JA = ("> このコマンドは `{}` のエイリアスです。\n\n- オリジナルのコマンドのドキュメントを表示する:\n\n"
            "`tldr {}`\n")


def make_index(vault: Path, **settings: object) -> NoteIndex:
    return NoteIndex(vault, None, Settings(vault=vault, **settings))


def top_paths(index: NoteIndex, query: str, n: int = 3) -> list[str]:
    return [hit.path for hit in index.search(query, limit=n)]


def touch(path: Path, text: str) -> None:
    """Write a note and move its mtime forward so a rescan by mtime/size sees the change."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.stat().st_mtime_ns if path.exists() else time.time_ns()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(old + 10_000_000, old + 10_000_000))


def test_full_build_reports_counts_and_skipped_reasons(vault: Path) -> None:
    report = make_index(vault).sync()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons == {
        "private/diary-secret.md": "excluded (nlmsync: false)",
        "quirks/binary-image.md": "binary",
        "quirks/empty.md": "empty",
        "quirks/latin1.md": "invalid utf-8 (byte 5)",
        "quirks/whitespace-only.md": "empty",
    }
    assert report.full_rescan
    assert report.indexed == report.added == 26
    assert not any(p.startswith(".obsidian") for p in make_index(vault).paths())


def test_heapsort_question_selects_the_heapsort_note_first(vault: Path) -> None:
    selected = make_index(vault).selected("How does heapsort work?")
    assert selected[0].path == "algorithms/sorting/heapsort.md"
    assert "private/diary-secret.md" not in [h.path for h in selected]


def test_compound_words_match_both_ways(vault: Path) -> None:
    index = make_index(vault)
    assert top_paths(index, "heap sort", 1) == ["algorithms/sorting/heapsort.md"]
    hit = index.search("heap sort", limit=1)[0]
    assert hit.matched_terms == ("heap", "heapsort", "sort")
    # "merge sort" is written as two words; the single word still finds it through the compound
    assert top_paths(index, "mergesort", 1) == ["algorithms/sorting/merge-sort.md"]


def test_korean_and_japanese_queries(vault: Path) -> None:
    index = make_index(vault)
    assert top_paths(index, "김치찌개 만드는 법", 1) == ["cooking/kimchi-jjigae.md"]
    assert top_paths(index, "찌개", 1) == ["cooking/kimchi-jjigae.md"]
    assert top_paths(index, "ヒープソート", 1) == ["アルゴリズム/ヒープソート.md"]
    assert top_paths(index, "京都 旅館", 1) == ["travel/京都旅行.md"]
    assert top_paths(index, "서울 여행", 1) == ["travel/서울 여행.md"]


def test_formula_text(vault: Path) -> None:
    index = make_index(vault)
    assert top_paths(index, "E = mc²", 1) == ["physics/formulas.md"]
    assert top_paths(index, "pV = nRT ideal gas", 1) == ["physics/thermodynamics.md"]


def test_path_boost_beats_body_mentions(vault: Path) -> None:
    (vault / "notes").mkdir()
    touch(vault / "notes" / "zebra.md", "A striped animal.")
    touch(vault / "notes" / "savanna.md", "We saw a zebra, then another zebra, near the zebra crossing.")
    assert top_paths(make_index(vault), "zebra", 2) == ["notes/zebra.md", "notes/savanna.md"]


def test_a_folder_name_weighs_less_than_a_file_name(tmp_path: Path) -> None:
    # the same words in the path, the same body: only whether "windows" names the folder or the note differs
    touch(tmp_path / "windows" / "switch.md", "Move the focus.")
    touch(tmp_path / "switch" / "windows.md", "Move the focus.")
    hits = make_index(tmp_path).search("windows")
    assert [h.path for h in hits] == ["switch/windows.md", "windows/switch.md"]
    assert hits[1].score < hits[0].score * 0.7  # tf 1 against 4, saturated (k1 1.0)


def test_a_word_of_a_longer_title_does_not_outrank_the_page_that_says_it(tmp_path: Path) -> None:
    """The page whose summary is the query beats one holding a query word as one of its title's words: the
    title is counted once (file name, not heading again) and its weight is shared among its words."""
    touch(tmp_path / "linux" / "dnf5.md", "# dnf5\n\n" + ALIAS_JA.format("dnf", "dnf"))
    touch(tmp_path / "linux" / "dnf-deplist.md",
          "# dnf deplist\n\n" + ALIAS_JA.format("dnf repoquery --deplist", "dnf repoquery"))
    for name in ("yum", "apt", "zypper", "pacman"):
        touch(tmp_path / "linux" / f"{name}.md", f"# {name}\n\n> Package manager.\n\n`{name} install`\n")
    hits = top_paths(make_index(tmp_path), "このコマンドは dnf のエイリアスです", 2)
    assert hits == ["linux/dnf5.md", "linux/dnf-deplist.md"]


def test_a_file_name_without_a_word_still_counts_in_the_length(tmp_path: Path) -> None:
    """Pages that all hold the query's words rank by length: a page named by symbols (`((`, `.`) counts its
    name as one token, as a page named by a word does, so the page whose body is shortest comes first (it did
    not when a name without a word counted none: the file name weighs 4 body words in the length)."""
    touch(tmp_path / "common" / "comma.md", "# comma\n\n" + ALIAS_JA.format(",", ","))
    touch(tmp_path / "common" / "((.md", "# ((\n\n" + ALIAS_JA.format("let", "let"))
    touch(tmp_path / "common" / "..md", "# .\n\n" + ALIAS_JA.format("source", "source"))
    hits = top_paths(make_index(tmp_path), "このコマンドは , のエイリアスです")
    assert hits == ["common/comma.md", "common/((.md", "common/..md"]


def test_heading_boost_beats_body_mention(vault: Path) -> None:
    touch(vault / "a.md", "Some text about walruses in the body of the note here.")
    touch(vault / "b.md", "# Walruses\n\nSome text about animals in the body of the note.")
    assert top_paths(make_index(vault), "walruses", 2) == ["b.md", "a.md"]


def test_ties_break_by_matched_terms_then_path(tmp_path: Path) -> None:
    # b = 0 and no path weight: every note has the same length norm, so scores can tie exactly
    settings = {"b": 0.0, "weight_path": 0.0}
    touch(tmp_path / "a-one-term.md", "alpha")
    touch(tmp_path / "z-two-terms.md", "beta 감")  # no ASCII compound between them
    touch(tmp_path / "m-same.md", "delta")
    touch(tmp_path / "c-same.md", "delta")
    index = make_index(tmp_path, **settings)
    hits = index.search("alpha alpha beta 감")
    assert hits[0].score == hits[1].score
    assert [h.path for h in hits] == ["z-two-terms.md", "a-one-term.md"]
    assert [h.path for h in index.search("delta")] == ["c-same.md", "m-same.md"]


def test_the_index_selects_by_the_selection_rule_and_its_settings(vault: Path) -> None:
    index = make_index(vault)
    selection = index.selection("heap sort")
    scores = [h.score for h in selection.candidates]
    kept = separated(scores, 15, 0.4, 3)
    assert [h.path for h in index.selected("heap sort")] == [h.path for h in selection.candidates[:kept]]
    assert all(h.score >= scores[0] * 0.4 for h in selection.chosen[3:])
    strict = make_index(vault, cutoff_ratio=1.0, min_k=3)
    assert [h.path for h in strict.selected("heap sort")] == [h.path for h in selection.candidates[:3]]
    assert len(make_index(vault, top_n=1, min_k=3).selected("heap sort")) == 1


def test_incremental_modify_delete_rename(vault: Path) -> None:
    index = make_index(vault)
    assert top_paths(index, "quokka") == []
    touch(vault / "cooking" / "shakshuka.md", "# Shakshuka\n\nA quokka watched me cook.")
    index.mark_path_modified("cooking/shakshuka.md")
    assert top_paths(index, "quokka") == ["cooking/shakshuka.md"]
    (vault / "cooking" / "shakshuka.md").rename(vault / "cooking" / "eggs.md")
    index.mark_path_deleted("cooking/shakshuka.md")
    index.mark_path_modified("cooking/eggs.md")
    assert top_paths(index, "quokka") == ["cooking/eggs.md"]
    (vault / "cooking" / "eggs.md").unlink()
    index.mark_path_deleted("cooking/eggs.md")
    assert top_paths(index, "quokka") == []
    assert "cooking/eggs.md" not in index.paths()


def test_modified_mark_for_a_vanished_or_non_note_path_removes_it(vault: Path) -> None:
    index = make_index(vault)
    index.sync()
    (vault / "inbox.md").rename(vault / "inbox.txt")
    index.mark_path_modified("inbox.md")
    index.mark_path_modified("inbox.txt")
    report = index.sync()
    assert report.removed == 1 and not report.full_rescan
    assert "inbox.md" not in index.paths()


def test_average_length_is_recomputed_after_changes(vault: Path) -> None:
    index = make_index(vault)
    before = index.search("heapsort", limit=1)[0].score
    touch(vault / "journal" / "long.md", "filler words " * 3000)
    index.mark_path_modified("journal/long.md")
    after = index.search("heapsort", limit=1)[0].score
    assert after != before
    assert index.search("heapsort", limit=1)[0].score == make_index(vault).search("heapsort", limit=1)[0].score


def test_periodic_full_rescan_safeguard(vault: Path) -> None:
    index = make_index(vault, full_rescan_every=2)
    index.sync()
    touch(vault / "projects" / "garden.md", "Unmarked change: wombat.")  # no event for this one
    for _ in range(2):
        index.mark_path_modified("inbox.md")
        assert not index.sync().full_rescan
        assert top_paths(index, "wombat") == []
    index.mark_path_modified("inbox.md")
    report = index.sync()
    assert report.full_rescan
    assert top_paths(index, "wombat") == ["projects/garden.md"]


def test_mark_full_rescan_needed_finds_unmarked_changes(vault: Path) -> None:
    index = make_index(vault)
    index.sync()
    touch(vault / "projects" / "garden.md", "numbat")
    (vault / "inbox.md").unlink()
    index.mark_full_rescan_needed()
    report = index.sync()
    assert report.full_rescan and report.updated == 1 and report.removed == 1
    assert top_paths(index, "numbat") == ["projects/garden.md"]


def test_a_note_that_turns_binary_leaves_the_index_and_is_reported(vault: Path) -> None:
    index = make_index(vault)
    index.sync()
    (vault / "inbox.md").write_bytes(b"\x00\x01binary now")
    index.mark_path_modified("inbox.md")
    report = index.sync()
    assert "inbox.md" not in index.paths()
    assert ("inbox.md", "binary") in {(s.path, s.reason) for s in report.skipped}
    touch(vault / "inbox.md", "text again: platypus")
    index.mark_path_modified("inbox.md")
    assert top_paths(index, "platypus") == ["inbox.md"]
    assert "inbox.md" not in {s.path for s in index.skipped()}


def test_exclude_patterns_keep_notes_out(vault: Path) -> None:
    index = make_index(vault, exclude=["cooking/**", "*.secret.md"])
    touch(vault / "x.secret.md", "kimchi")
    paths = index.paths()
    assert not any(p.startswith("cooking/") for p in paths)
    assert "x.secret.md" not in paths
    assert top_paths(index, "kimchi jjigae", 1) != ["cooking/kimchi-jjigae.md"]


def test_a_link_to_an_excluded_note_is_not_searchable(vault: Path) -> None:
    (vault / "recipes.md").symlink_to(vault / "cooking" / "kimchi-jjigae.md")
    index = make_index(vault, exclude=["cooking/**"])
    assert "recipes.md" not in index.paths()
    assert {s.path: s.reason for s in index.skipped()}["recipes.md"] == "excluded by pattern"
    assert all(not hit.path.startswith(("cooking/", "recipes")) for hit in index.search("kimchi jjigae"))


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_symlink_loops_and_links_out_of_the_vault_are_skipped(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("outside secret capybara")
    (vault / "algorithms" / "loop").symlink_to(vault / "algorithms")
    (vault / "escape").symlink_to(outside)
    (vault / "escape-note.md").symlink_to(outside / "secret.md")
    report = make_index(vault).sync()
    reasons = {s.path: s.reason for s in report.skipped}
    assert reasons["algorithms/loop"] == "symlink loop"
    assert reasons["escape"] == "outside vault (symlink)"
    assert reasons["escape-note.md"] == "outside vault (symlink)"
    assert top_paths(make_index(vault), "capybara") == []


def test_nfd_file_name_is_the_nfc_note(vault: Path) -> None:
    import unicodedata
    name = unicodedata.normalize("NFD", "café.md")
    (vault / name).write_text("# Café\n\nespresso tonic")
    index = make_index(vault)
    assert top_paths(index, "espresso") == ["café.md"]
    touch(vault / name, "# Café\n\nflat white")
    index.mark_path_modified(unicodedata.normalize("NFC", "café.md"))
    assert top_paths(index, "flat white", 1) == ["café.md"]
    assert top_paths(index, "espresso") == []


def test_matched_terms_of_a_query_with_more_than_52_terms(tmp_path: Path) -> None:
    from nlmsync.search.tokenize import tokenize
    words = " ".join(f"w{i}" for i in range(70))
    touch(tmp_path / "many.md", words)
    touch(tmp_path / "few.md", "w1 w68 unrelated")
    index = make_index(tmp_path)
    hits = index.search(words)
    assert [h.path for h in hits] == ["many.md", "few.md"]
    assert set(hits[0].matched_terms) == set(tokenize(words))
    assert hits[1].matched_terms == ("w1", "w68")


def test_a_stop_word_in_most_notes_is_not_scored_unless_stop_words_count_in_full(tmp_path: Path) -> None:
    for i in range(4):
        touch(tmp_path / f"n{i}.md", f"# Note {i}\n\nThe tide and the moon {i}.\n")
    touch(tmp_path / "river.md", "# River\n\nA river flows.\n")

    hits = make_index(tmp_path).search("the river", limit=10)
    assert [(hit.path, hit.matched_terms) for hit in hits] == [("river.md", ("river",))]

    in_full = make_index(tmp_path, query_stop_words=False).search("the river", limit=10)
    assert in_full[0].path == "river.md"
    assert sorted(hit.path for hit in in_full[1:]) == ["n0.md", "n1.md", "n2.md", "n3.md"]
