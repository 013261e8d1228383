"""The pytest plugin `nlmsync.testing`: registered by its entry point, its fixture serves a fake with the
marker's capacity and fault switches, in process and over HTTP, and shows what the fake holds and saw."""

from __future__ import annotations

import tomllib
from pathlib import Path

import anyio
import pytest

from nlmsync.config import Settings
from nlmsync.errors import ConnectionLostError, ServerCapacityError, ServerError
from nlmsync.notebooklm import connect

ROOT = Path(__file__).resolve().parent.parent


def test_the_plugin_is_a_pytest11_entry_point(pytestconfig: pytest.Config) -> None:
    import nlmsync.testing

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["entry-points"]
    assert declared["pytest11"] == {"nlmsync": "nlmsync.testing"}
    assert pytestconfig.pluginmanager.is_registered(nlmsync.testing)


@pytest.mark.anyio
@pytest.mark.fake_notebooklm(capacity=1, error_on=["source_rename=renames are off"])
async def test_marker_switches_apply_in_process(fake_notebooklm) -> None:
    async with connect(fake_notebooklm.server, Settings()) as client:
        with anyio.fail_after(30):
            nb = (await client.notebook_create("CI")).notebook_id
            added = await client.source_add_text(nb, "Heapsort builds a heap.", "a.md · 01")
            with pytest.raises(ServerCapacityError):
                await client.source_add_text(nb, "Quicksort picks a pivot.", "b.md · 02")
            with pytest.raises(ServerError, match="renames are off"):
                await client.source_rename(nb, added.source_id, "c")
    assert fake_notebooklm.source_titles(nb) == ["a.md · 01"]
    assert [(c.tool, c.applied) for c in fake_notebooklm.calls] == [
        ("notebook_create", True), ("source_add", True), ("source_add", False), ("source_rename", False)]


@pytest.mark.anyio
async def test_configure_mid_test_and_serve_over_http(fake_notebooklm) -> None:
    fake_notebooklm.configure(drop_on=["notebook_get:1:after"])
    url = fake_notebooklm.url
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    async with connect(url, Settings(retry_attempts=1)) as client:
        with anyio.fail_after(30):
            nb = (await client.notebook_create("CI")).notebook_id
            with pytest.raises(ConnectionLostError):
                await client.notebook_get(nb)
            assert [n.id for n in (await client.notebook_list()).notebooks] == [nb]
    assert list(fake_notebooklm.notebooks) == [nb]
    assert [(c.tool, c.dropped) for c in fake_notebooklm.calls] == [
        ("notebook_create", None), ("notebook_get", "after"), ("notebook_list", None)]


def test_a_bad_switch_is_refused(fake_notebooklm) -> None:
    with pytest.raises(ValueError, match="--drop-on"):
        fake_notebooklm.configure(drop_on=["source_add"])


@pytest.mark.anyio
@pytest.mark.fake_notebooklm(file_titles_ignored=True)
async def test_file_sources_and_the_switch_under_which_their_title_does_not_take(fake_notebooklm, tmp_path) -> None:
    from tests.documents.pdfs import pdf, text_page

    (tmp_path / "paper.pdf").write_bytes(pdf(text_page("Tapirs browse at dusk")))
    async with connect(fake_notebooklm.server, Settings()) as client:
        notebook = await client.notebook_create("CI")
        added = await client.source_add_file(notebook.notebook_id, tmp_path / "paper.pdf", "paper.pdf · 0123abcd")
    assert added.title == "paper.pdf · 0123abcd"
    assert fake_notebooklm.source_titles(notebook.notebook_id) == ["paper.pdf"]
    assert "Tapirs browse at dusk" in fake_notebooklm.notebooks[notebook.notebook_id].sources[added.source_id].text


@pytest.mark.anyio
@pytest.mark.fake_notebooklm(processing_fails=["bad*.pdf"])
async def test_the_switch_that_fails_the_processing_of_named_files(fake_notebooklm, tmp_path) -> None:
    from tests.documents.pdfs import pdf, text_page

    for name in ("good.pdf", "bad.pdf"):
        (tmp_path / name).write_bytes(pdf(text_page(f"Tapirs of {name}")))
    async with connect(fake_notebooklm.server, Settings()) as client:
        notebook = await client.notebook_create("CI")
        await client.source_add_file(notebook.notebook_id, tmp_path / "good.pdf", "good.pdf · 0123abcd")
        with pytest.raises(ServerError, match="failed to process in NotebookLM"):
            await client.source_add_file(notebook.notebook_id, tmp_path / "bad.pdf", "bad.pdf · 4567cdef")
    assert fake_notebooklm.source_titles(notebook.notebook_id) == ["good.pdf · 0123abcd", "bad.pdf"]
