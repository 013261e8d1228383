"""The links of a saved answer (`ask --save`), made to reach from the answer what they reached in their notes.

An answer quotes its notes with their links, and a link is read from the note it is in: `[[#How it works]]` and
`[[#^block-id|alias]]` name a heading or a block of the quoted note, `[[heap]]` the note a reader of the quoted
note reaches. Copied into `answers/…`, the first point into the answer and the second may reach another note, or
none. `rewrite_links` reads each link as its own note does and writes one that resolves anywhere in the vault:

- The note a link was copied from: the cited note whose text holds the link as written (of several, one cited
  by the marker that follows the link in its paragraph, `… [[#Setup]] … [2]`); for a link no cited note holds
  verbatim (the server rewrote it), the note of that marker, or of a same-note link the cited note with that
  heading or block.
- A same-note link gets that note: `[[#heading]]` → `[[folder/note#heading]]`, `[[#^id|alias]]` →
  `[[folder/note#^id|alias]]`.
- A link to a note or file is resolved as from its own note: relative to the note's folder, as a vault path, or
  by the end of its path (a name alone is that); of several files, the one in the note's folder, else the one
  with the shortest path. It is written as the name when no other file has it, else as the vault path. A
  markdown link to a vault file (`[text](other.md#part)`) becomes the same Obsidian link; a URL stays.
- A link that reaches no file of the vault becomes its text (the alias, else what it names): a saved answer
  holds no link to nowhere.
- Code is copied as it is: a link written in a code block or a code span (`![[Document.pdf]]` in an example of
  how to embed a file) is an example, not a link. Code is found as CommonMark reads it (`markdown-it-py`): fenced
  and indented blocks, in a quote or a list too, and spans of any number of backticks.

Paths and names are compared ignoring letter case, as Obsidian does. Citation markers are `[1]`, `[1, 2]`,
`[3-5]`. The vault is listed once, and only for an answer with a link to resolve.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from nlmsync import vault as vault_files
from nlmsync.app.results import Citation
from nlmsync.errors import InputError
from nlmsync.text import LINK_PATTERN, Link

__all__ = ["rewrite_links"]

_MARKER = re.compile(r"\[(\d+(?:\s*[-,]\s*\d+)*)\]")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t>]*\n")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what CommonMark ends a line with
_BACKTICKS = re.compile(r"(?<!`)`+(?!`)")
# What an Obsidian link target cannot hold: such a file is linked in markdown form, its path percent-encoded.
_NOT_IN_TARGETS = re.compile(r"[#^|\[\]]")


class _VaultFiles:
    """Every file of the vault (the folders nlmsync never reads left out), looked up as Obsidian resolves a link."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.by_path: dict[str, str] = {}
        self.by_name: dict[str, list[str]] = {}
        for path in sorted(paths):
            self.by_path.setdefault(path.casefold(), path)
            self.by_name.setdefault(posixpath.basename(path).casefold(), []).append(path)

    @staticmethod
    def walk(root: Path) -> list[str]:
        """The vault path of every file under `root`, but in the folders nlmsync never reads."""
        found: list[str] = []
        for folder, folders, files in os.walk(root):
            folders[:] = [f for f in folders if f not in vault_files.IGNORED_DIRS]
            rel = os.path.relpath(folder, root)
            found.extend(vault_files.normalize_rel_path(name if rel == "." else f"{rel}/{name}") for name in files)
        return found

    def resolve(self, target: str, source: str | None) -> str | None:
        """The vault path `target` reaches from the note `source` (None: from nowhere in particular), or None."""
        wanted = target.replace("\\", "/").strip("/")
        tries = [wanted] if posixpath.splitext(wanted)[1] else [wanted + vault_files.NOTE_SUFFIX, wanted]
        for tried in tries:
            if source is not None:
                relative = posixpath.normpath(posixpath.join(posixpath.dirname(source), tried))
                if relative.casefold() in self.by_path:
                    return self.by_path[relative.casefold()]
            if tried.casefold() in self.by_path:
                return self.by_path[tried.casefold()]
            tail = "/" + tried.casefold()
            ending = [p for p in self.by_name.get(posixpath.basename(tried).casefold(), ())
                      if ("/" + p.casefold()).endswith(tail)]
            if ending:
                folder = posixpath.dirname(source) if source is not None else None
                return min(ending, key=lambda p: (posixpath.dirname(p) != folder, p.count("/"), len(p), p))
        return None

    def shortest(self, path: str) -> str:
        """How a link names `path`: by its name when no other file has it, else by its vault path (a note
        without `.md`)."""
        name = posixpath.basename(path)
        written = name if len(self.by_name.get(name.casefold(), ())) == 1 else path
        return written[:-len(vault_files.NOTE_SUFFIX)] if vault_files.has_note_suffix(written) else written


def rewrite_links(answer: str, citations: Sequence[Citation], vault_root: Path, saved_at: str,
                  files: Callable[[], Iterable[str]] | None = None) -> str:
    """`answer`, to be saved at the vault path `saved_at`, with each of its links rewritten to resolve from
    anywhere in the vault (see the module docstring); `files` lists the vault's files (default: a walk of it,
    made only when a link needs it)."""
    if "[" not in answer:
        return answer
    notes = _CitedNotes(vault_root, citations)
    listing: list[_VaultFiles] = []

    def vault() -> _VaultFiles:
        if not listing:  # the answer is a file of the vault too: a name it shares is no longer unique
            listing.append(_VaultFiles([*(files() if files is not None else _VaultFiles.walk(vault_root)), saved_at]))
        return listing[0]

    code = _code_ranges(answer)

    def rewritten(match: re.Match[str]) -> str:
        if any(start <= match.start() < end for start, end in code):
            return match.group()
        embed, inside, text, href = match.groups()
        link = Link.wiki(embed, inside) if inside is not None else Link.markdown(embed, text, href)
        if link is None:
            return match.group()
        source = notes.source_of(answer, match.start(), match.group(), link)
        dest = source if not link.target else vault().resolve(link.target, source)
        return _written(link, dest, vault()) if dest is not None else link.text()

    return LINK_PATTERN.sub(rewritten, answer)


def _code_ranges(markdown: str) -> list[tuple[int, int]]:
    """Where `markdown`'s code is, as (start, end) offsets: its code blocks, and the code spans of its other text."""
    from markdown_it import MarkdownIt  # imported by an answer with a link only

    lines = [0, *(found.end() for found in _LINE_BREAK.finditer(markdown)), len(markdown)]
    ranges: list[tuple[int, int]] = []
    for token in MarkdownIt("commonmark").parse(markdown):
        if token.map is None:
            continue
        start, end = lines[token.map[0]], lines[min(token.map[1], len(lines) - 1)]
        if token.type in ("fence", "code_block"):
            ranges.append((start, end))
        elif token.type == "inline":
            ranges.extend(_code_spans(markdown, start, end))
    return ranges


def _code_spans(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    """The code spans of `markdown[start:end]`, one paragraph's text: a run of backticks (not escaped by a
    backslash) up to the next run of as many, as CommonMark reads them."""
    spans: list[tuple[int, int]] = []
    at = start
    while (opening := _BACKTICKS.search(markdown, at, end)) is not None:
        open_at = opening.start()
        before = markdown[at:open_at]
        escapes = len(before) - len(before.rstrip("\\"))
        if escapes % 2:  # the first backtick is escaped: the rest of the run may open a span
            open_at += 1
        width = opening.end() - open_at
        closing = next((run for run in _BACKTICKS.finditer(markdown, opening.end(), end)
                        if run.end() - run.start() == width), None) if width else None
        if closing is None:
            at = opening.end()
            continue
        spans.append((open_at, closing.end()))
        at = closing.end()
    return spans


def _written(link: Link, dest: str, vault: _VaultFiles) -> str:
    """The Obsidian link to `dest` (and the link's heading or block, alias and `!`)."""
    name = vault.shortest(dest)
    sub = f"#{link.sub}" if link.sub else ""
    if _NOT_IN_TARGETS.search(name):  # no Obsidian link can name it: a markdown link, its path encoded
        return f"{link.embed}[{link.text() or name}](<{quote(dest)}{quote(sub, safe='#^')}>)"
    alias = f"{link.pipe}{link.alias}" if link.alias is not None else ""
    return f"{link.embed}[[{name}{sub}{alias}]]"


class _CitedNotes:
    """The notes an answer cites, by citation number, read as they are now (once each)."""

    def __init__(self, vault_root: Path, citations: Sequence[Citation]) -> None:
        self.vault_root = vault_root
        self.by_number = {c.number: c.path for c in citations if c.path is not None}
        self.paths = list(dict.fromkeys(self.by_number.values()))
        self._texts: dict[str, str] = {}

    def text(self, path: str) -> str:
        if path not in self._texts:
            try:
                self._texts[path] = vault_files.read_note_text(self.vault_root, path)
            except (InputError, OSError):
                self._texts[path] = ""
        return self._texts[path]

    def source_of(self, answer: str, at: int, written: str, link: Link) -> str | None:
        """The cited note the link at `at` (`written` as it stands) was copied from, or None."""
        marked = self._marked(answer, at)
        holding = [p for p in self.paths if written in self.text(p)]
        chosen = [p for p in holding if p in marked] or holding
        if chosen:
            return chosen[0]
        if marked:
            return marked[0]
        if not link.target:
            return next((p for p in self.paths if _holds(self.text(p), link.sub)), None)
        return None

    def _marked(self, answer: str, at: int) -> list[str]:
        """The notes cited by the first marker after `at` in its paragraph, else by the last one before it."""
        starts = [0, *(m.end() for m in _PARAGRAPH_BREAK.finditer(answer, 0, at))]
        end_break = _PARAGRAPH_BREAK.search(answer, at)
        paragraph = (starts[-1], end_break.start() if end_break else len(answer))
        markers = [m for m in _MARKER.finditer(answer, *paragraph)]
        after = [m for m in markers if m.start() >= at]
        before = [m for m in markers if m.start() < at]
        chosen = after[0] if after else before[-1] if before else None
        if chosen is None:
            return []
        numbers = _numbers(chosen.group(1))
        return list(dict.fromkeys(self.by_number[n] for n in numbers if n in self.by_number))


def _numbers(marker: str) -> list[int]:
    """The citation numbers of a marker's inside: `1, 3-5` is 1, 3, 4, 5."""
    numbers: list[int] = []
    for part in marker.split(","):
        first, _, last = part.strip().partition("-")
        start, stop = int(first), int(last or first)
        numbers.extend(range(start, min(stop, start + 100) + 1))
    return numbers


def _holds(text: str, sub: str) -> bool:
    """Whether a note's `text` has the heading (the last of `h1#h2`) or the block (`^id`) a link names."""
    if sub.startswith("^"):
        return re.search(rf"(?:^|\s)\^{re.escape(sub[1:])}[ \t]*$", text, flags=re.MULTILINE) is not None
    wanted = _heading_key(sub.split("#")[-1])
    return any(_heading_key(m.group(1)) == wanted
               for m in re.finditer(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, flags=re.MULTILINE))


def _heading_key(heading: str) -> str:
    return " ".join(re.sub(r"[#^|\[\]:]", " ", heading).split()).casefold()
