"""Links in a note's text, as Obsidian reads them: `[[target#sub|alias]]` and `[text](href)`, either embedded with a
leading `!`; and the attachments a note links to, with the words around each link (what a file with no text of its
own is found by)."""

from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass
from urllib.parse import unquote

# `[[inside]]` (group 2) or `[text](href)` (groups 3 and 4), either with a `!` (group 1) to embed
LINK_PATTERN = re.compile(r"(!?)(?:\[\[([^\[\]\n]+?)\]\]|\[([^\[\]\n]*)\]\((<[^<>\n]+>|[^()\s]+)\))")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")


@dataclass(frozen=True)
class Link:
    """A link as written: `embed` (`!`), `target` (a path or name, "" for the note itself), `sub` (a heading,
    `h1#h2`, or `^block`, without the leading `#`), `alias` (None without one), `pipe` (`|`, or `\\|` in a table)."""

    embed: str
    target: str
    sub: str
    alias: str | None
    pipe: str = "|"

    @classmethod
    def wiki(cls, embed: str, inner: str) -> Link:
        split = re.search(r"\\?\|", inner)
        body, alias, pipe = ((inner[:split.start()], inner[split.end():], split.group()) if split
                             else (inner, None, "|"))
        target, _, sub = body.partition("#")
        return cls(embed, target.strip(), sub.strip(), alias, pipe)

    @classmethod
    def markdown(cls, embed: str, text: str, href: str) -> Link | None:
        href = href[1:-1] if href.startswith("<") else href
        if _SCHEME.match(href):
            return None  # a URL, not a file of the vault
        target, _, sub = href.partition("#")
        return cls(embed, unquote(target).strip(), unquote(sub).strip(), text or None)

    def text(self) -> str:
        """What a reader sees of the link: its alias, else what it names."""
        if self.alias is not None:
            return self.alias
        return " > ".join(part for part in (self.target, *self.sub.split("#")) if part).lstrip("^")


def attachment_links(text: str, note_path: str, suffixes: frozenset[str]) -> dict[str, str]:
    """The attachments the note at `note_path` links to (a link whose target has one of `suffixes`), each with the
    lines its links stand on, the links themselves made their visible text: {target: words}. A markdown link's
    target is made a vault path from the note's folder; a wikilink's is as written (a name, or a path), as
    Obsidian resolves it (`link_matches`)."""
    if not suffixes or ("[[" not in text and "](" not in text) or not _mentions(suffixes).search(text):
        return {}
    found: dict[str, list[str]] = {}
    for match in LINK_PATTERN.finditer(text):
        embed, inside, label, href = match.groups()
        link = Link.wiki(embed, inside) if inside is not None else Link.markdown(embed, label, href)
        if link is None or posixpath.splitext(link.target)[1].lower() not in suffixes:
            continue
        target = link.target.lstrip("/")
        if inside is None and not link.target.startswith("/"):
            target = posixpath.normpath(posixpath.join(posixpath.dirname(note_path), target)).lstrip("./")
        start = text.rfind("\n", 0, match.start()) + 1
        end = text.find("\n", match.end())
        line = text[start:end if end >= 0 else len(text)]
        words = LINK_PATTERN.sub(lambda m: _visible(m), line).strip()
        lines = found.setdefault(target.casefold(), [])
        if words and words not in lines:
            lines.append(words)
    return {target: "\n".join(lines) for target, lines in found.items()}


@functools.lru_cache(maxsize=8)
def _mentions(suffixes: frozenset[str]) -> re.Pattern[str]:
    """A pattern finding a mention of one of `suffixes` in any letter case: a note without one links to no
    attachment, and is not parsed for links (most notes)."""
    words = "|".join(sorted(re.escape(suffix) for suffix in suffixes))
    return re.compile(f"(?:{words})(?![A-Za-z0-9])", re.IGNORECASE)


def _visible(match: re.Match[str]) -> str:
    embed, inside, label, href = match.groups()
    link = Link.wiki(embed, inside) if inside is not None else Link.markdown(embed, label, href)
    return link.text() if link is not None else (label or "")


def link_matches(target: str, path: str) -> bool:
    """Whether a link's `target` (as `attachment_links` records it, lower case) reaches the file at vault `path`: the
    same path, the file's name, or the end of its path."""
    folded = path.casefold()
    return folded == target or folded.endswith("/" + target)
