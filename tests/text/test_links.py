"""The attachments a note links to, with the words around each link."""

from __future__ import annotations

from nlmsync.text import attachment_links, link_matches

SUFFIXES = frozenset({".pdf", ".png", ".docx"})


def test_wikilinks_embeds_and_markdown_links_to_attachments() -> None:
    text = ("# Reading\n\nThe paper ![[Attention.pdf]] explains it.\n"
            "See [the manual](../files/My%20Manual.pdf#page=3) and [[report.docx|the report]].\n"
            "A [site](https://example.com/x.pdf), a note [[other]] and [[notes/shot.png]].\n")
    assert attachment_links(text, "papers/reading.md", SUFFIXES) == {
        "attention.pdf": "The paper Attention.pdf explains it.",
        "files/my manual.pdf": "See the manual and the report.",
        "report.docx": "See the manual and the report.",
        "notes/shot.png": "A site, a note other and notes/shot.png.",
    }
    assert attachment_links("no links here", "a.md", SUFFIXES) == {}
    assert attachment_links(text, "a.md", frozenset()) == {}


def test_a_target_reaches_a_path_by_name_or_by_the_end_of_its_path() -> None:
    assert link_matches("attention.pdf", "papers/Attention.pdf")
    assert link_matches("papers/attention.pdf", "papers/Attention.pdf")
    assert link_matches("attention.pdf", "Attention.pdf")
    assert not link_matches("attention.pdf", "papers/MyAttention.pdf")
