"""The client's file uploads against the in-process fake: the arguments the real server takes, the waits, and the
server's refusal of a folder it may not read, classified into an error that names the setting."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.documents.pdfs import pdf, text_page

from nlmsync.config import Settings
from nlmsync.errors import FileOutsideServerFoldersError, exit_code_for
from nlmsync.fake import FakeNotebookLM, build_fake_server
from nlmsync.notebooklm import connect

pytestmark = pytest.mark.anyio


async def test_a_file_is_uploaded_by_its_absolute_path_and_waited_for(tmp_path: Path, sleeps: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "paper.pdf").write_bytes(pdf(text_page("Tapirs")))
    (tmp_path / "talk.mp3").write_bytes(b"ID3 not really audio")
    monkeypatch.chdir(tmp_path)
    fake = FakeNotebookLM()
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    async with connect(build_fake_server(fake), Settings(call_timeout=30, media_timeout=900), sleep=sleeps) as client:
        added = await client.source_add_file(nb, "paper.pdf", "paper.pdf · 0123abcd")
        await client.source_add_file(nb, Path("talk.mp3"), "talk.mp3 · 4567cdef")
    assert added.title == "paper.pdf · 0123abcd" and added.source_type == "file"
    sent = [call.arguments for call in fake.calls if call.tool == "source_add"]
    assert sent[0]["file_path"] == os.path.join(str(tmp_path), "paper.pdf") and sent[0]["wait"] is True
    assert [a["wait_timeout"] for a in sent] == [30, 900]


async def test_a_folder_the_server_may_not_read_is_a_clear_error(tmp_path: Path, sleeps: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "paper.pdf").write_bytes(pdf(text_page("Tapirs")))
    monkeypatch.setenv("NOTEBOOKLM_ALLOWED_FILE_DIRS", str(tmp_path / "elsewhere"))
    fake = FakeNotebookLM()
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    async with connect(build_fake_server(fake), Settings(), sleep=sleeps) as client:
        with pytest.raises(FileOutsideServerFoldersError) as raised:
            await client.source_add_file(nb, tmp_path / "paper.pdf", "paper.pdf · 0123abcd")
    error = raised.value
    assert str(error) == ("source_add: the NotebookLM server may read files only in the folders its "
                          f"NOTEBOOKLM_ALLOWED_FILE_DIRS setting names ({(tmp_path / 'paper.pdf').resolve()} is "
                          "not in them)")
    assert error.hint is not None and "NOTEBOOKLM_ALLOWED_FILE_DIRS" in error.hint
    assert exit_code_for(error) == 2
