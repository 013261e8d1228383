"""The vault package exports exactly the documented names, and code outside it imports them from the package,
never from its modules (`paths`, `attachments`, `walk`, `notes`, `front_matter`, `exclusion`, `changes` are its inside)."""

from __future__ import annotations

import ast
import types
from pathlib import Path

import nlmsync
from nlmsync import vault

SRC = Path(nlmsync.__file__).parent
ROOT = SRC.parent.parent


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(vault.__all__) == [
        "ATTACHMENT_KINDS", "DEFAULT_ATTACHMENT_KINDS", "EXCLUDED_BY_FRONT_MATTER", "EXCLUDED_BY_PATTERN", "EXCLUSION_REASONS",
        "FrontMatter", "IGNORED_DIRS", "INVALID_NAME_ENCODING", "NOTE_SUFFIX", "NoteChange", "NoteFile",
        "STATE_DIR_NAME", "STATE_FILE_NAME", "SkippedNote", "VaultListing", "VaultScan", "attachment_kind",
        "attachment_suffixes", "check_exclude", "check_vault",
        "decode_note", "excluded_by_pattern", "exclusion_reason", "front_matter_strings", "has_note_suffix",
        "is_attachment_path", "is_blank", "is_excluded", "is_media", "is_note_path", "is_valid_name", "iter_lines", "link_target", "list_vault",
        "matches_exclude", "normalize_rel_path", "parse_front_matter", "parse_kinds", "printable_path", "read_file_bytes",
        "read_input_file", "read_note_file", "read_note_text", "resolve_in_vault", "scan_vault", "suffix_of", "unreadable",
    ]
    for name in vault.__all__:
        assert not isinstance(getattr(vault, name), types.ModuleType), name


def test_code_outside_the_vault_package_imports_from_the_package() -> None:
    reaching_in = []
    for folder in (SRC, ROOT / "tests", ROOT / "benchmarks"):
        for path in sorted(folder.rglob("*.py")):
            if path.is_relative_to(SRC / "vault"):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                    [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
                reaching_in += [f"{path.relative_to(ROOT)}: {name}" for name in names
                                if name.startswith("nlmsync.vault.")]
    assert reaching_in == []
