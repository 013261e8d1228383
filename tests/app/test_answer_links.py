"""A saved answer's links reach from the answer what they reached in the notes they were copied from: same-note
links and block references get their note, a name two notes share gets the path, a link to nowhere becomes its
text — checked by reading every link of the saved note back against the vault."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli

from nlmsync.app.answer_links import rewrite_links
from nlmsync.app.results import Citation

TEMPLATES = """# Templates

## Template settings

Dates follow the format set under [[#Template settings]]. ^template-settings-date-time-formatting

See [[#^template-settings-date-time-formatting|date formats]], [[Daily notes]], [[#سجل المزامنة]] and
[the guide](../guide.md#Start), or [the site](https://obsidian.md). ![[diagram.png]]

## سجل المزامنة

Sync history lives here. ^sync-log
"""
SYNC = """# المزامنة

## سجل المزامنة

يحفظ [[#سجل المزامنة]] كل تغيير، انظر [[#^history|السجل]] و[[Missing note|ملاحظة مفقودة]].

سطر أخير ^history
"""
FILES = {
    "plugins/Templates.md": TEMPLATES,
    "plugins/Daily notes.md": "# Daily notes\n\nOne note a day.\n",
    "journal/Daily notes.md": "# Daily notes\n\nA journal's own page.\n",
    "ar/مزامنة.md": SYNC,
    "guide.md": "# Guide\n\n## Start\n\nBegin here.\n",
    "img/diagram.png": "\x89PNG",
}
_WIKI = re.compile(r"!?\[\[([^\[\]|#]*)(?:#([^\[\]|]*))?(?:\|[^\[\]]*)?\]\]")


def _make_vault(root: Path) -> Path:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _headings_and_blocks(text: str) -> set[str]:
    headings = {m.group(1).strip() for m in re.finditer(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.MULTILINE)}
    blocks = {f"^{m.group(1)}" for m in re.finditer(r"\s\^([\w-]+)\s*$", text, flags=re.MULTILINE)}
    return headings | blocks


def _unresolved(vault: Path, text: str) -> list[str]:
    """The links of `text` that do not reach a file of the vault from anywhere in it: a target must be a vault
    path or the name of exactly one file (`.md` left out for notes), and a heading or block must be in the note."""
    files = [p.relative_to(vault).as_posix() for p in vault.rglob("*") if p.is_file() and ".nlmsync" not in p.parts]
    wrong = []
    for match in _WIKI.finditer(text):
        target, sub = match.group(1), match.group(2)
        found = [f for f in files if f.casefold() in (target.casefold(), f"{target}.md".casefold())]
        named = [f for f in files if f.rsplit("/", 1)[-1].casefold() in (target.casefold(), f"{target}.md".casefold())]
        note = found[0] if found else named[0] if len(named) == 1 else None
        if note is None or (sub and sub not in _headings_and_blocks((vault / note).read_text(encoding="utf-8"))):
            wrong.append(match.group())
    return wrong


def test_links_copied_from_quoted_notes_point_where_they_pointed_there(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    answer = ("Dates follow the format set under [[#Template settings]] [1]. See "
              "[[#^template-settings-date-time-formatting|date formats]], [[Daily notes]], [[#سجل المزامنة]] and "
              "[the guide](../guide.md#Start), or [the site](https://obsidian.md). ![[diagram.png]] [1]\n\n"
              "يحفظ [[#سجل المزامنة]] كل تغيير، انظر [[#^history|السجل]] و[[Missing note|ملاحظة مفقودة]] [2].")
    citations = [Citation(number=1, source_id="s1", path="plugins/Templates.md"),
                 Citation(number=2, source_id="s2", path="ar/مزامنة.md")]
    saved = rewrite_links(answer, citations, vault, "answers/Dates.md")
    assert saved == (
        "Dates follow the format set under [[Templates#Template settings]] [1]. See "
        "[[Templates#^template-settings-date-time-formatting|date formats]], [[plugins/Daily notes]], "
        "[[Templates#سجل المزامنة]] and [[guide#Start|the guide]], or [the site](https://obsidian.md). "
        "![[diagram.png]] [1]\n\n"
        "يحفظ [[مزامنة#سجل المزامنة]] كل تغيير، انظر [[مزامنة#^history|السجل]] وملاحظة مفقودة [2].")
    assert _unresolved(vault, saved) == []
    assert _unresolved(vault, answer)  # as quoted, they did not


def test_a_name_the_saved_answer_shares_is_written_as_the_path(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    citations = [Citation(number=1, source_id="s1", path="plugins/Templates.md")]
    saved = rewrite_links("Under [[#Template settings]] [1].", citations, vault, "answers/Templates.md")
    assert saved == "Under [[plugins/Templates#Template settings]] [1]."


def test_a_same_note_link_the_server_rewrote_goes_to_the_cited_note_with_that_heading(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    citations = [Citation(number=1, source_id="s1", path="guide.md"),
                 Citation(number=2, source_id="s2", path="plugins/Templates.md")]
    saved = rewrite_links("It is set in [[#template settings]].\n\nAnd [[#Nowhere at all]] too [1].", citations,
                          vault, "answers/x.md", files=lambda: FILES)
    assert saved == "It is set in [[Templates#template settings]].\n\nAnd [[guide#Nowhere at all]] too [1]."


def test_a_rewritten_block_or_nested_heading_link_goes_to_the_cited_note_that_has_it(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    (vault / "setup.md").write_text("# Setup: first steps\n\nBegin.\n", encoding="utf-8")
    citations = [Citation(number=1, source_id="s1", path="guide.md"),
                 Citation(number=2, source_id="s2", path="plugins/Templates.md"),
                 Citation(number=3, source_id="s3", path="setup.md"),
                 Citation(number=4, source_id="s4", path="ar/مزامنة.md")]
    # none as the notes write them (the server dropped an alias, a colon, a letter's case) and no marker after
    # them: each goes to the first cited note that has the block or the heading (the last of a nested one)
    saved = rewrite_links("Kept in [[#^history]], dated as [[#^template-settings-date-time-formatting]], set under "
                          "[[#Templates#template settings]], begun at [[#Setup first steps]].", citations, vault,
                          "answers/x.md", files=lambda: [*FILES, "setup.md"])
    assert saved == ("Kept in [[مزامنة#^history]], dated as [[Templates#^template-settings-date-time-formatting]], "
                     "set under [[Templates#Templates#template settings]], begun at [[setup#Setup first steps]].")


def test_an_answer_without_links_never_lists_the_vault(tmp_path: Path) -> None:
    def refused() -> list[str]:
        raise AssertionError("the vault was listed")

    assert rewrite_links("Plain [1] text.", [], tmp_path, "answers/x.md", files=refused) == "Plain [1] text."


@pytest.fixture()
def _no_nlmsync_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)


@pytest.mark.usefixtures("_no_nlmsync_environment")
@pytest.mark.parametrize("question", ["Where do the template notes point for date formats, daily notes and the guide?",
                                      "يحفظ كل تغيير في سجل المزامنة؟"])
def test_every_link_of_an_answer_saved_from_the_fake_resolves(vault: Path, capsys: pytest.CaptureFixture[str],
                                                             question: str) -> None:
    _make_vault(vault)
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Links", "ask",
                             question, "--save", "--json")
    assert code == 0, err
    result = json.loads(out)
    saved = (vault / result["saved_path"]).read_text(encoding="utf-8")
    assert len(_unresolved(vault, result["answer"])) >= 2  # the passages were quoted with links that point nowhere
    assert len(_WIKI.findall(saved)) >= 3 and _unresolved(vault, saved) == []


EMBEDDING = """# Embed files

Embed a PDF in a note with an embed link:

```md
![[Document.pdf]]
```

Open it at a page with `![[Document.pdf#page=3]]`, as in [[Daily notes]].
"""


def test_links_inside_code_are_copied_as_they_are(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    citations = [Citation(number=1, source_id="s1", path="plugins/Daily notes.md")]
    code = ("> ```md\n> ![[Document.pdf]]\n> ```\n> See [[Daily notes]] [1]\n\n"  # a fenced block in a quote
            "> ```md ![[Document.pdf]] ``` [1]\n\n"  # the same block quoted on one line: a code span
            "Also `![[Document.pdf#page=3]]`, ``a ` [[x]]`` and\n\n    ![[indented.pdf]]\n\n"
            "- a list\n\n  ~~~\n  [[inside a list]]\n  ~~~\n")
    saved = rewrite_links(code, citations, vault, "answers/Embed.md")
    assert saved == code.replace("See [[Daily notes]]", "See [[plugins/Daily notes]]")
    # an escaped backtick opens nothing: the link after it is a link
    assert rewrite_links("\\`[[Daily notes]]` [1]", citations, vault, "answers/x.md") == \
        "\\`[[plugins/Daily notes]]` [1]"


@pytest.mark.usefixtures("_no_nlmsync_environment")
def test_an_answer_saved_from_the_fake_keeps_its_code_as_the_note_has_it(vault: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _make_vault(vault)
    (vault / "Embed files.md").write_text(EMBEDDING, encoding="utf-8")
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Code", "ask",
                             "How do I embed a PDF document in a note?", "--save", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert "![[Document.pdf]]" in result["answer"] and "![[Document.pdf#page=3]]" in result["answer"]
    saved = (vault / result["saved_path"]).read_text(encoding="utf-8")
    assert saved.count("![[Document.pdf]]") == result["answer"].count("![[Document.pdf]]")
    assert "`![[Document.pdf#page=3]]`" in saved and "Document.pdf > page=3" not in saved


def _resolved(tmp_path: Path, files: dict[str, str], cited: str, link: str) -> str:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    return rewrite_links(f"See {link} [1].", [Citation(number=1, source_id="s1", path=cited)], tmp_path,
                         "answers/saved.md")


def test_a_link_two_files_end_with_goes_to_the_one_in_the_citing_notes_folder(tmp_path: Path) -> None:
    files = {"z/sub/note.md": "See [[sub/x]].", "z/sub/x.md": "mine", "q/sub/x.md": "another"}
    assert _resolved(tmp_path, files, "z/sub/note.md", "[[sub/x]]") == "See [[z/sub/x]] [1]."


def test_a_link_two_files_end_with_goes_to_the_one_in_fewer_folders(tmp_path: Path) -> None:
    files = {"a/note.md": "See [[x]].", "zzzzzzzzzz/x.md": "higher", "b/c/x.md": "deeper, shorter path"}
    assert _resolved(tmp_path, files, "a/note.md", "[[x]]") == "See [[zzzzzzzzzz/x]] [1]."


def test_a_link_written_with_backslashes_or_slashes_around_reaches_its_note(tmp_path: Path) -> None:
    files = {"a/note.md": "See [[docs\\XML]].", "docs/XML.md": "the note", "b/XML.md": "another",
             "docs/LaTeX.md": "a name ending in X"}
    assert _resolved(tmp_path, files, "a/note.md", "[[docs\\XML]]") == "See [[docs/XML]] [1]."
    assert _resolved(tmp_path, files, "a/note.md", "[[/docs/LaTeX/]]") == "See [[LaTeX]] [1]."


def test_a_backtick_left_open_in_one_paragraph_opens_no_code_in_the_next(tmp_path: Path) -> None:
    vault = _make_vault(tmp_path)
    citations = [Citation(number=1, source_id="s1", path="plugins/Templates.md")]
    saved = rewrite_links("One `tick and [[Daily notes]] [1].\n\nAnother `tick [1].", citations, vault,
                          "answers/x.md")
    assert saved == "One `tick and [[plugins/Daily notes]] [1].\n\nAnother `tick [1]."


def test_a_link_to_a_name_no_wikilink_can_hold_stays_a_markdown_link_with_its_text(tmp_path: Path) -> None:
    # `#` cannot be in a wikilink's target: the link stays a markdown one, its path encoded, its text kept
    files = {"a/note.md": "See [](<C%23 basics.md>) and [the basics](<C%23 basics.md>).", "a/C# basics.md": "sharp"}
    assert _resolved(tmp_path, files, "a/note.md", "[](<C%23 basics.md>)") == \
        "See [C# basics.md](<a/C%23%20basics.md>) [1]."
    assert _resolved(tmp_path, files, "a/note.md", "[the basics](<C%23 basics.md>)") == \
        "See [the basics](<a/C%23%20basics.md>) [1]."
