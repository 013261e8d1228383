"""Everything about the vault's files on disk, one module a job: `paths` (canonical vault-relative paths, which
paths are notes, confinement), `attachments` (which files are attachments, by kind), `walk` (finding the notes
and attachments), `notes` (reading them), `exclusion`, and `changes`
(the words for how a note changed). Callers import the names below from the package; a note's front matter and
its lines, which the vault's rules read, are the text package's (`nlmsync.text`), named here too.
"""

from __future__ import annotations

from nlmsync.text.front_matter import FrontMatter, front_matter_strings, parse_front_matter
from nlmsync.text.lines import iter_lines
from nlmsync.vault.attachments import (
    ATTACHMENT_KINDS,
    DEFAULT_ATTACHMENT_KINDS,
    attachment_kind,
    attachment_suffixes,
    is_attachment_path,
    is_media,
    parse_kinds,
    suffix_of,
)
from nlmsync.vault.changes import NoteChange
from nlmsync.vault.exclusion import (
    EXCLUDED_BY_FRONT_MATTER,
    EXCLUDED_BY_PATTERN,
    EXCLUSION_REASONS,
    check_exclude,
    excluded_by_pattern,
    exclusion_reason,
    is_excluded,
    matches_exclude,
)
from nlmsync.vault.notes import (
    decode_note,
    is_blank,
    read_file_bytes,
    read_input_file,
    read_note_file,
    read_note_text,
    unreadable,
)
from nlmsync.vault.paths import (
    IGNORED_DIRS,
    INVALID_NAME_ENCODING,
    NOTE_SUFFIX,
    STATE_DIR_NAME,
    STATE_FILE_NAME,
    has_note_suffix,
    is_note_path,
    is_valid_name,
    link_target,
    normalize_rel_path,
    printable_path,
    resolve_in_vault,
)
from nlmsync.vault.walk import (
    NoteFile,
    SkippedNote,
    VaultListing,
    VaultScan,
    check_vault,
    list_vault,
    scan_vault,
)

__all__ = [
    "ATTACHMENT_KINDS",
    "DEFAULT_ATTACHMENT_KINDS",
    "EXCLUDED_BY_FRONT_MATTER",
    "EXCLUDED_BY_PATTERN",
    "EXCLUSION_REASONS",
    "IGNORED_DIRS",
    "INVALID_NAME_ENCODING",
    "NOTE_SUFFIX",
    "STATE_DIR_NAME",
    "STATE_FILE_NAME",
    "FrontMatter",
    "NoteChange",
    "NoteFile",
    "SkippedNote",
    "VaultListing",
    "VaultScan",
    "attachment_kind",
    "attachment_suffixes",
    "check_exclude",
    "check_vault",
    "decode_note",
    "excluded_by_pattern",
    "exclusion_reason",
    "front_matter_strings",
    "has_note_suffix",
    "is_attachment_path",
    "is_blank",
    "is_excluded",
    "is_media",
    "is_note_path",
    "is_valid_name",
    "iter_lines",
    "link_target",
    "list_vault",
    "matches_exclude",
    "normalize_rel_path",
    "parse_front_matter",
    "parse_kinds",
    "printable_path",
    "read_file_bytes",
    "read_input_file",
    "read_note_file",
    "read_note_text",
    "resolve_in_vault",
    "scan_vault",
    "suffix_of",
    "unreadable",
]
