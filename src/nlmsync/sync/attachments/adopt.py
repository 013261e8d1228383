"""Levelling, for attachments: a source the state file does not know, titled as an attachment's upload (or as the
upload's file name, when the server's rename did not take), is adopted without reading it when the file at its path
has the bytes its title names; a copy of a source the state file keeps is deleted only once proven — its text read
back matches the file's (`PROOF_F1`), and a file with no text is never proven so; anything else is left alone."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

from nlmsync import vault as vault_files
from nlmsync.errors import AuthenticationRequiredError, ConnectionProblem, NotebookLMError, ServerCommandNotFoundError
from nlmsync.store import SourceMapping
from nlmsync.sync.attachments.files import FileReader, PreparedFile
from nlmsync.sync.evidence import Evidence
from nlmsync.sync.titles import parse_note_title, parse_title

PROOF_F1 = 0.9
"""How close (word F1) the text a source holds must be to the text read from the file for the source to be proven
an upload of that file: NotebookLM reads a file with its own reader, so the words agree closely, not exactly."""

_ALL_SUFFIXES = vault_files.attachment_suffixes(vault_files.ATTACHMENT_KINDS)


class FileClaim(NamedTuple):
    """A listed source the state file does not know, titled as an attachment's upload: the path as shown and the
    short hash of the bytes."""

    source_id: str
    title: str
    shown: str
    short_hash: str


def file_claim(source_id: str, title: str) -> FileClaim | None:
    """The claim of a source whose title is an attachment's (its path has an attachment's extension, as nlmsync
    titles it or as the upload's file name); None for any other title, and for a part of a document's text (a
    document too long for one source goes up as a long note does: its parts are claimed as a note's)."""
    parsed = parse_title(title)
    if parsed is None or vault_files.suffix_of(parsed[0]) not in _ALL_SUFFIXES:
        return None
    note = parse_note_title(title)
    if note is not None and note.part_count > 1:
        return None
    return FileClaim(source_id, title, *parsed)


def word_f1(held: str, read: str) -> float:
    """The F1 of the words (lower-cased, as counted multisets) of `held` against `read`."""
    a, b = Counter(held.lower().split()), Counter(read.lower().split())
    common = sum((a & b).values())
    if not common:
        return 0.0
    precision, recall = common / sum(a.values()), common / sum(b.values())
    return 2 * precision * recall / (precision + recall)


async def settle_file_claims(evidence: Evidence, claims: Sequence[FileClaim]) -> None:
    """Settle the unknown sources titled as an attachment's upload (see the module)."""
    deps, remote, done = evidence.deps, evidence.remote, evidence.done
    store, nb = deps.store, deps.notebook_id
    with FileReader(deps) as files:
        for source_id, title, shown, short in claims:
            path = evidence.resolve(shown) if not shown.startswith("…") else None
            loaded = files.load([path], {path}) if path is not None else []
            file = loaded[0] if loaded and isinstance(loaded[0], PreparedFile) else None
            if path is None or file is None or not file.content_hash.startswith(short):
                continue  # not this vault's file as it is now: nothing proves it nlmsync's, it is left alone
            rows = store.mappings_by_path(nb, path)
            held = store.resolve_source_id(rows[0].source_id) if len(rows) == 1 else None
            if held is not None and held in remote:
                if rows[0].content_hash == file.content_hash:  # the state file keeps a source of these bytes
                    if await _proven(evidence, files, file, source_id):
                        evidence.retire(source_id, f"duplicate of {rows[0].title}")
                    continue
            with store.step():
                if held is not None and held in remote:  # another machine replaced it: this machine's goes
                    store.queue_deletion(nb, held, f"replaced by another upload of {path}")
                    store.register_source_alias(held, source_id)
                    done.retired.append(held)
                store.remove_mappings(nb, path)
                store.upsert_mapping(SourceMapping(notebook_id=nb, path=path, source_id=source_id,
                                                   content_hash=file.content_hash, title=title))
            done.notes.append(path)


async def _proven(evidence: Evidence, files: FileReader, file: PreparedFile, source_id: str) -> bool:
    """Whether the source holds the file's text (word F1 at least `PROOF_F1`); never for a file with no text, whose
    uploads nothing but the state file can tell apart."""
    if files.read(file) is not None or file.document is None or not file.document.has_text:
        return False
    try:
        held = (await evidence.deps.client.source_get_content(source_id)).content
    except (AuthenticationRequiredError, ConnectionProblem, ServerCommandNotFoundError):
        raise
    except NotebookLMError:
        return False
    return word_f1(held, file.document.text) >= PROOF_F1
