"""`ask --save`: an answer kept in the vault as a markdown note.

The note has front matter recording the question, the notebook, the conversation and the date, the question as
its title, the answer as NotebookLM gave it (its `[n]` markers included; the links it copied from the notes it
quotes made to reach from the answer what they reached in their notes, `answer_links`), and a *Sources* list that
gives each marker an Obsidian link to the note and heading it cites
(`[[algorithms/sorting/heapsort#How does it work?]]`).
Unless `sync_saved_answers` is set, the front matter also says `nlmsync: false`, so the answer stays out of the
notebook (and of the search index) like any note the user keeps out: the notebook already has what it cites.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from datetime import UTC, datetime
from pathlib import Path

import regex

from nlmsync import vault as vault_files
from nlmsync._text import CONTROL_CHARS
from nlmsync.app.answer_links import rewrite_links
from nlmsync.app.results import AskResult, Citation
from nlmsync.errors import InputError

__all__ = ["ANSWERS_FOLDER", "NAME_BYTES", "answer_note", "answer_target", "save_answer"]

ANSWERS_FOLDER = "answers"
NAME_BYTES = 255
"""The longest file (or folder) name the usual file systems take (ext4, btrfs, XFS, APFS), in bytes of UTF-8: a
name made from a question of 100 CJK characters or emoji takes 300–400."""
# Characters a file name or an Obsidian link cannot hold (a link's `#`, `^`, `|`, `[`, `]`), and the path ones.
_NOT_IN_NAMES = re.compile(r'[\\/:*?"<>|#^\[\]]+')
_NOT_IN_LINKS = re.compile(r"[#^|\[\]]+")
_NAME_CHARS = 100  # characters as a reader sees them (grapheme clusters) a name keeps of the question
_GRAPHEME = regex.compile(r"\X")


def answer_target(vault_root: Path, question: str, file: str) -> str:
    """The vault path an answer to `question` is saved at: `file` (vault-relative; `.md` added when missing), or
    for "" a name made from the question in `answers/` (the first one not taken: `… 2.md`, `… 3.md`), in NFC as
    every vault path is. Control
    and bidirectional characters (`CONTROL_CHARS`: a right-to-left override would show the name reordered) are
    left out of either, and each name is cut to `NAME_BYTES` bytes between two characters as a reader sees them
    (an emoji with its modifiers, a letter with its accents stay whole), keeping `.md`.

    Raises:
        PathOutsideVaultError: `file` is absolute or leads out of the vault.
        InputError: `file` is already in the vault (a saved answer never overwrites a note).
    """
    if file:
        vault_files.resolve_in_vault(vault_root, file)  # an absolute path, `..`: refused as given
        parts = vault_files.normalize_rel_path(CONTROL_CHARS.sub("", file)).split("/")
        name = parts.pop()
        if vault_files.has_note_suffix(name):
            name, suffix = name[:-len(vault_files.NOTE_SUFFIX)], name[-len(vault_files.NOTE_SUFFIX):]
        else:
            suffix = vault_files.NOTE_SUFFIX
        rel = "/".join([*(_fit(part, NAME_BYTES) for part in parts), _named(name, suffix)])
        if os.path.exists(vault_files.resolve_in_vault(vault_root, rel)):
            raise InputError(f"{rel}: already in the vault; a saved answer never overwrites a note",
                             hint="name another FILE, or leave it out for a new name in answers/")
        return rel
    words = _NOT_IN_NAMES.sub(" ", CONTROL_CHARS.sub(" ", question))
    name = "".join(_GRAPHEME.findall(unicodedata.normalize("NFC", " ".join(words.split()).strip(". ")))[:_NAME_CHARS])
    number = 1
    while True:
        rel = f"{ANSWERS_FOLDER}/{_named(name, f' {number}' if number > 1 else '', vault_files.NOTE_SUFFIX)}"
        if not os.path.exists(vault_files.resolve_in_vault(vault_root, rel)):
            return rel
        number += 1


def _named(stem: str, *tail: str) -> str:
    """`stem` (cut to fit, no trailing dot or space; "answer" when nothing is left) followed by `tail`, in at most
    `NAME_BYTES` bytes."""
    end = "".join(tail)
    return (_fit(stem, NAME_BYTES - len(end.encode("utf-8"))).rstrip(". ") or "answer") + end


def _fit(name: str, room: int) -> str:
    """`name` cut to at most `room` bytes of UTF-8 between two grapheme clusters."""
    if len(name.encode("utf-8")) <= room:
        return name
    kept: list[str] = []
    for cluster in _GRAPHEME.findall(name):
        room -= len(cluster.encode("utf-8"))
        if room < 0:
            break
        kept.append(cluster)
    return "".join(kept)


def answer_note(result: AskResult, asked_at: datetime, *, sync: bool) -> str:
    """The markdown of a saved answer (see the module docstring); `sync`: leave out `nlmsync: false`."""
    front = [f"question: {_yaml_text(result.question)}", f"notebook: {_yaml_text(result.notebook_id)}",
             f"conversation: {_yaml_text(result.conversation_id or '')}",
             f"date: {asked_at.astimezone(UTC).isoformat(timespec='seconds')}"]
    if not sync:
        front.append("nlmsync: false")
    lines = ["---", *front, "---", "", f"# {' '.join(result.question.split())}", "", result.answer.strip()]
    if result.citations:
        lines += ["", "## Sources", ""]
        lines += [f"- [{c.number}] {_cited(c)}" for c in result.citations]
    return "\n".join(lines) + "\n"


def save_answer(vault_root: Path, target: str, result: AskResult, *, sync: bool,
                asked_at: datetime | None = None) -> None:
    """Write the answer note at `target` (from `answer_target`), its folders made as needed; never over a file.

    Raises:
        InputError: `target` appeared in the vault meanwhile, or cannot be written (the message names it).
    """
    path = vault_files.resolve_in_vault(vault_root, target)
    linked = result.model_copy(update={"answer": rewrite_links(result.answer, result.citations, vault_root, target)})
    text = answer_note(linked, asked_at or datetime.now(UTC), sync=sync)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise InputError(f"{target}: already in the vault; a saved answer never overwrites a note") from None
    except OSError as exc:
        raise InputError(f"{target}: cannot save the answer ({exc.strerror})") from None


def _cited(citation: Citation) -> str:
    """An Obsidian link to the note (and heading) a citation names — to a PDF's page, which Obsidian opens the PDF
    at, or an attachment and the slide or section —, or what is known of its source."""
    if citation.path is None:
        return f"pack {citation.pack}" if citation.pack else f"source {citation.source_id}"
    if not vault_files.is_note_path(citation.path):
        if citation.page is not None and vault_files.suffix_of(citation.path) == ".pdf":
            return f"[[{citation.path}#page={citation.page}]]"
        return f"[[{citation.path}]]" + (f", {citation.place}" if citation.place else "")
    link = citation.path.removesuffix(vault_files.NOTE_SUFFIX)
    if citation.heading:
        heading = " ".join(_NOT_IN_LINKS.sub(" ", citation.heading).split())
        if heading:
            link += f"#{heading}"
    return f"[[{link}]]"


def _yaml_text(text: str) -> str:
    """`text` as a YAML scalar on one line: a JSON string is a double-quoted YAML string."""
    return json.dumps(text, ensure_ascii=False)
