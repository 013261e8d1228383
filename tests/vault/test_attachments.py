"""Which files are attachments, and the walk listing them beside the notes when asked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nlmsync.config import load_settings
from nlmsync.errors import ConfigError
from nlmsync.vault import (
    ATTACHMENT_KINDS,
    attachment_kind,
    attachment_suffixes,
    is_attachment_path,
    list_vault,
    parse_kinds,
    scan_vault,
)

DOCUMENTS = attachment_suffixes(["documents"])


def test_the_kinds_hold_the_42_extensions_notebooklm_reads_besides_markdown() -> None:
    every = [suffix for suffixes in ATTACHMENT_KINDS.values() for suffix in suffixes]
    assert len(every) == len(set(every)) == 42 and ".md" not in every
    assert DOCUMENTS == {".pdf", ".docx", ".pptx", ".epub", ".txt", ".csv"}
    assert attachment_kind("Scans/IMG_001.JPEG") == "images" and attachment_kind("talk.mp3") == "audio"
    assert attachment_kind("notes.md") is None and attachment_kind(".pdf") is None


def test_an_attachment_path_is_outside_the_folders_never_read() -> None:
    assert is_attachment_path("papers/Paper.PDF", DOCUMENTS)
    assert not is_attachment_path(".obsidian/plugins/x.pdf", DOCUMENTS)
    assert not is_attachment_path("shot.png", DOCUMENTS) and not is_attachment_path("paper.pdf", frozenset())


def test_the_walk_lists_attachments_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "note.md").write_text("# a note\n")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "paper.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / "files" / "shot.png").write_bytes(b"png")
    (tmp_path / "files" / "blank.docx").write_bytes(b"")
    (tmp_path / ".trash").mkdir()
    (tmp_path / ".trash" / "old.pdf").write_bytes(b"%PDF-1.7")
    (tmp_path / "linked.pdf").symlink_to(tmp_path / "files" / "paper.pdf")
    os.symlink("/etc/hostname", tmp_path / "outside.pdf")
    assert list_vault(tmp_path).paths == ["note.md"]
    scan = scan_vault(tmp_path, DOCUMENTS)
    assert [n.path for n in scan.notes] == ["note.md"]
    assert [a.path for a in scan.attachments] == ["files/paper.pdf", "linked.pdf"]
    assert {(s.path, s.reason) for s in scan.skipped} == {("files/blank.docx", "empty"),
                                                          ("outside.pdf", "outside vault (symlink)")}


@pytest.mark.parametrize(("given", "kinds"), [
    (None, ["documents"]), ("none", []), ("all", list(ATTACHMENT_KINDS)), ("images, Documents", ["documents", "images"]),
    ('["video", "audio"]', ["audio", "video"]),
])
def test_the_attachments_setting(tmp_path: Path, given: str | None, kinds: list[str]) -> None:
    env = {} if given is None else {"NLMSYNC_ATTACHMENTS": given}
    assert load_settings(vault=tmp_path, env=env).attachments == kinds


def test_the_attachments_setting_in_a_config_file(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('attachments = "none"\n')
    assert load_settings(vault=tmp_path, config_file=config, env={}).attachments == []
    config.write_text('attachments = ["documents", "images"]\n')
    assert load_settings(vault=tmp_path, config_file=config, env={}).attachments == ["documents", "images"]
    config.write_text('attachments = "images"\n')
    with pytest.raises(ConfigError, match="'attachments': a list is wanted"):
        load_settings(vault=tmp_path, config_file=config, env={})
    config.write_text('attachments = ["pictures"]\n')
    with pytest.raises(ConfigError, match="attachments.*'pictures' is no kind of attachment"):
        load_settings(vault=tmp_path, config_file=config, env={})


def test_parse_kinds_refuses_what_is_no_list() -> None:
    with pytest.raises(ValueError, match="a list of kinds is wanted"):
        parse_kinds(3)
