"""An attachment's title and its upload's file name: the name says what the title says (so a source the server
named after the file is still recognised), fits a file system's 255 bytes, and is parsed back; an attachment's
upload is proven by its words, not exactly."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlmsync.sync.attachments.adopt import PROOF_F1, file_claim, word_f1
from nlmsync.sync.titles import UPLOAD_NAME_BYTES, parse_title, source_title, upload_name

HASH = "0123abcd" * 4


def test_the_upload_name_is_the_title_with_its_slashes_shown_and_the_extension_after() -> None:
    title = source_title("papers/paper.pdf", HASH)
    assert title == "papers/paper.pdf · 0123abcd"
    assert upload_name(title, ".pdf") == "papers\u2215paper.pdf · 0123abcd.pdf"
    assert parse_title(upload_name(title, ".pdf")) == parse_title(title) == ("papers/paper.pdf", "0123abcd")


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\u2215"),
                        min_size=1, max_size=40), min_size=1, max_size=12))
def test_an_upload_name_fits_a_file_name_and_parses_back_to_the_path_or_its_end(folders: list[str]) -> None:
    path = "/".join(f.strip() or "x" for f in folders) + "/paper.pdf"
    name = upload_name(source_title(path, HASH), ".pdf")
    assert len(name.encode("utf-8")) <= UPLOAD_NAME_BYTES and "/" not in name
    parsed = parse_title(name)
    assert parsed is not None and parsed[1] == "0123abcd"
    shown = parsed[0]
    assert shown == path or (shown.startswith("…") and path.endswith(shown[1:]))


@pytest.mark.parametrize("title", ["paper.pdf", "x · 0123abcd.pdf", "a.pdf · 0123abcd.txt", "a.md · 0123abcd"])
def test_titles_that_are_no_attachment_upload_are_not_claimed_as_one(title: str) -> None:
    assert file_claim("s1", title) is None


def test_an_attachment_title_is_claimed_in_both_forms() -> None:
    title = source_title("papers/paper.pdf", HASH)
    assert file_claim("s1", title) == file_claim("s1", upload_name(title, ".pdf"))._replace(
        title=title) == ("s1", title, "papers/paper.pdf", "0123abcd")


def test_word_f1_proves_a_close_reading_and_not_another_text() -> None:
    read = "Lowland tapirs forage at dusk; their snouts are prehensile and short."
    assert word_f1(read, read) == 1.0
    assert word_f1(read.replace("dusk;", "dusk"), read) >= PROOF_F1
    assert word_f1("a shopping list: eggs, milk, bread", read) < PROOF_F1
    assert word_f1("", read) == 0.0
