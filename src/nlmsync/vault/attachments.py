"""Which files of the vault are attachments: the files NotebookLM reads that are not notes, by kind.

NotebookLM takes 43 file extensions as sources (`.md` is the notes'). They fall into four kinds, and the
`attachments` setting names the kinds a vault's attachments are taken from: documents by default, images, audio
and video only when asked for (a typical vault holds hundreds of pasted screenshots).
"""

from __future__ import annotations

from collections.abc import Iterable

from nlmsync.vault.paths import IGNORED_DIRS

DOCUMENTS = "documents"
ATTACHMENT_KINDS: dict[str, frozenset[str]] = {
    DOCUMENTS: frozenset({".pdf", ".docx", ".pptx", ".epub", ".txt", ".csv"}),
    "images": frozenset({".avif", ".bmp", ".gif", ".heic", ".heif", ".ico", ".jp2", ".jpe", ".jpeg", ".jpg", ".png",
                         ".tif", ".tiff", ".webp"}),
    "audio": frozenset({".aac", ".aif", ".aifc", ".aiff", ".amr", ".au", ".cda", ".m4a", ".mid", ".mp3", ".ogg",
                        ".opus", ".ra", ".ram", ".snd", ".wav", ".wma"}),
    "video": frozenset({".3g2", ".3gp", ".avi", ".mp4", ".mpeg"}),
}
"""The kinds of attachment and the file extensions of each (lower case)."""
MEDIA_KINDS = frozenset({"audio", "video"})
"""The kinds NotebookLM transcribes once uploaded, which can take minutes (the real server's own command line waits
up to 600 s for one)."""
DEFAULT_ATTACHMENT_KINDS = (DOCUMENTS,)
"""The kinds a vault's attachments are taken from when the `attachments` setting is not given."""
NO_ATTACHMENTS = "none"
ALL_ATTACHMENTS = "all"


def attachment_suffixes(kinds: Iterable[str]) -> frozenset[str]:
    """The file extensions of `kinds` (names of `ATTACHMENT_KINDS`), lower case with their dot."""
    return frozenset().union(*(ATTACHMENT_KINDS[kind] for kind in kinds))


def suffix_of(name: str) -> str:
    """A file name's (or path's) extension, lower case with its dot; "" when it has none."""
    base = name[name.rfind("/") + 1:]
    dot = base.rfind(".")
    return base[dot:].lower() if dot > 0 else ""


def attachment_kind(name: str) -> str | None:
    """The kind of attachment a file name (or path) is, by its extension; None for any other file."""
    suffix = suffix_of(name)
    return next((kind for kind, suffixes in ATTACHMENT_KINDS.items() if suffix in suffixes), None)


def is_media(name: str) -> bool:
    """Whether a file name (or path) is of a kind NotebookLM takes long to process (`MEDIA_KINDS`)."""
    return attachment_kind(name) in MEDIA_KINDS


def is_attachment_path(path: str, suffixes: frozenset[str]) -> bool:
    """True for a vault path whose extension is one of `suffixes` (`attachment_suffixes` of the vault's kinds),
    outside the folders nlmsync never reads."""
    if not suffixes or suffix_of(path) not in suffixes:
        return False
    return not any(part in IGNORED_DIRS for part in path.split("/")[:-1])


def parse_kinds(value: object) -> list[str]:
    """The `attachments` setting's kinds from what a config file, the environment or a flag gives: a list of kinds,
    a comma-separated string of them, "none" (no attachments) or "all".

    Raises:
        ValueError: naming the word that is no kind.
    """
    if isinstance(value, str):
        word = value.strip().lower()
        if word == NO_ATTACHMENTS:
            return []
        if word == ALL_ATTACHMENTS:
            return list(ATTACHMENT_KINDS)
        value = [part for part in (p.strip() for p in word.split(",")) if part]
    if not isinstance(value, (list, tuple)):
        raise ValueError("a list of kinds is wanted (documents, images, audio, video), or \"none\" or \"all\"")
    kinds: list[str] = []
    for item in value:
        kind = item.strip().lower() if isinstance(item, str) else item
        if kind not in ATTACHMENT_KINDS:
            raise ValueError(f"{item!r} is no kind of attachment (documents, images, audio, video)")
        if kind not in kinds:
            kinds.append(kind)
    return [kind for kind in ATTACHMENT_KINDS if kind in kinds]
