"""`nlmsync serve` in-process: search_notes, read_note, get_chunk, confinement and invalid arguments."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from sqlite_utils import Database
from tests.server.answers import answer

import nlmsync.server as server_package
from nlmsync.config import Settings
from nlmsync.errors import StateError
from nlmsync.reading import note as reading
from nlmsync.reading.note import ChunkPlan, plan_chunks
from nlmsync.search.index import NoteIndex
from nlmsync.server import VaultTools, build_server, serving
from nlmsync.server import _vault as vault_tools
from nlmsync.store.db import open_database

pytestmark = pytest.mark.anyio

TRANSCRIPT = "meetings/2026-04-15-q2-planning-transcript.md"


async def _call(settings: Settings, tool: str, arguments: dict[str, Any]) -> Any:
    with serving(settings) as server:
        async with Client(server) as client:
            return await client.call_tool(tool, arguments)


async def _ok(settings: Settings, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await _call(settings, tool, arguments)
    return answer(result)


async def _error(settings: Settings, tool: str, arguments: dict[str, Any]) -> str:
    result = await _call(settings, tool, arguments)
    assert result.is_error
    return result.content[0].text


async def test_serving_closes_the_state_file_on_the_way_out(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[Database] = []

    def recording_open(path: Path) -> Database:
        opened.append(open_database(path))
        return opened[-1]

    monkeypatch.setattr(server_package, "open_database", recording_open)
    with pytest.raises(RuntimeError, match="client went away"), serving(Settings(vault=vault)) as server:
        async with Client(server) as client:
            await client.call_tool("search_notes", {"query": "heapsort"})
        assert opened[0].execute("select 1").fetchone() == (1,)
        raise RuntimeError("client went away")
    with pytest.raises(sqlite3.ProgrammingError, match="closed"):
        opened[0].execute("select 1")


def test_a_damaged_state_file_is_refused_untouched(vault: Path) -> None:
    state = vault / ".nlmsync" / "state.db"
    state.parent.mkdir()
    state.write_bytes(b"not a database at all")
    with pytest.raises(StateError, match="not a usable nlmsync database"), serving(Settings(vault=vault)):
        pass
    assert state.read_bytes() == b"not a database at all"
    assert not state.with_name("state.db-wal").exists()


async def test_lists_every_tool_with_typed_inputs(vault: Path) -> None:
    with serving(Settings(vault=vault)) as server:
        async with Client(server) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == {"search_notes", "read_note", "get_chunk", "ask_notebook", "refresh_notebook"}
    assert tools["search_notes"].input_schema["required"] == ["query"]
    assert tools["read_note"].input_schema["properties"]["chunk"]["anyOf"][0]["minimum"] == 0
    assert not any(t.output_schema for t in tools.values())  # each description says what its tool answers


async def test_search_groups_chunks_by_note_with_offsets_and_snippets(vault: Path) -> None:
    found = await _ok(Settings(vault=vault), "search_notes", {"query": "heapsort sift down", "limit": 5})
    first = found["results"][0]
    assert first["path"] == "algorithms/sorting/heapsort.md" and first["selected"]
    assert first["matched_terms"] == ["heapsort", "sift down"]  # the query's words, not the index's `siftdown`
    text = (vault / first["path"]).read_text(encoding="utf-8")
    chunk = first["chunks"][0]
    assert chunk["chunk_id"].startswith(f"{first['path']}:")
    assert chunk["char_offset_start"] < chunk["char_offset_end"] <= len(text)
    assert "heap" in chunk["snippet"].lower()
    assert first["total_chunks"] >= 1
    scores = [r["score"] for r in found["results"]]
    assert scores == sorted(scores, reverse=True)


async def test_a_note_matching_by_its_path_only_still_offers_its_first_chunk(vault: Path) -> None:
    found = await _ok(Settings(vault=vault), "search_notes", {"query": "formulas"})
    [note] = [r for r in found["results"] if r["path"] == "physics/formulas.md"]
    text = (vault / "physics/formulas.md").read_text(encoding="utf-8")
    assert "formulas" not in text.lower()  # the path is what matched
    [chunk] = note["chunks"]
    assert (chunk["chunk_id"], chunk["score"]) == ("physics/formulas.md:0", 0.0)
    assert chunk["char_offset_start"] == 0
    assert chunk["snippet"].startswith("# Physics formulae") and chunk["snippet"][:40] in text


async def test_search_in_a_transcript_points_at_30_second_windows(vault: Path) -> None:
    found = await _ok(Settings(vault=vault), "search_notes", {"query": "dead letter queue replay", "limit": 3})
    note = next(r for r in found["results"] if r["path"] == TRANSCRIPT)
    text = (vault / TRANSCRIPT).read_text(encoding="utf-8")
    for chunk in note["chunks"]:
        span = text[chunk["char_offset_start"]:chunk["char_offset_end"]]
        assert span.lstrip().startswith("[") and len(span) < 2000
        assert chunk["start_time"] is not None


async def test_search_never_returns_excluded_notes(vault: Path) -> None:
    found = await _ok(Settings(vault=vault), "search_notes", {"query": "heapsort kimchi private diary laptop"})
    assert "private/diary-secret.md" not in [r["path"] for r in found["results"]]
    globbed = await _ok(Settings(vault=vault, exclude=["cooking/**"]), "search_notes", {"query": "kimchi"})
    assert not [r for r in globbed["results"] if r["path"].startswith("cooking/")]


async def test_read_small_note_whole_and_large_one_as_preview(vault: Path) -> None:
    small = await _ok(Settings(vault=vault), "read_note", {"path": "algorithms/sorting/heapsort.md"})
    assert small["mode"] == "full"
    assert small["content"] == (vault / "algorithms/sorting/heapsort.md").read_text(encoding="utf-8")
    large = await _ok(Settings(vault=vault), "read_note", {"path": TRANSCRIPT})
    assert large["mode"] == "preview" and large["has_timestamps"] and large["hints"]
    assert len(large["content"]) <= 500


async def test_read_note_ranges_times_and_query(vault: Path) -> None:
    settings = Settings(vault=vault)
    ranged = await _ok(settings, "read_note", {"path": TRANSCRIPT, "chunks": "20-22"})
    assert [c["index"] for c in ranged["chunks"]] == [20, 21, 22]
    timed = await _ok(settings, "read_note", {"path": TRANSCRIPT, "start_time": "0:10:00", "end_time": "0:12:00"})
    assert timed["mode"] == "time_range" and "[00:10:" in timed["content"] and "[00:12:" not in timed["content"]
    in_seconds = await _ok(settings, "read_note", {"path": TRANSCRIPT, "start_time": 600, "end_time": "720"})
    assert in_seconds["content"] == timed["content"]
    sampled = await _ok(settings, "read_note", {"path": TRANSCRIPT, "query": "certificate runbook"})
    roles = {c["role"] for c in sampled["chunks"]}
    assert {"match", "beginning"} <= roles and sampled["total_chunks"] > 40


async def test_get_chunk_with_surrounding(vault: Path) -> None:
    got = await _ok(Settings(vault=vault), "get_chunk", {"chunk_id": f"{TRANSCRIPT}:5", "surrounding": 1})
    assert [(c["index"], c["role"]) for c in got["chunks"]] == [(4, "surrounding"), (5, "requested"),
                                                                (6, "surrounding")]
    text = (vault / TRANSCRIPT).read_text(encoding="utf-8")
    for c in got["chunks"]:
        assert text[c["char_offset_start"]:c["char_offset_end"]] == c["text"]


@pytest.mark.parametrize("path", [
    "../outside.md", "algorithms/../../outside.md", "/etc/passwd", "C:/Windows/win.ini",
    "link-out.md", "linked-dir/secret.md",
])
async def test_paths_leaving_the_vault_are_refused(vault: Path, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("TOP-SECRET-CONTENT", encoding="utf-8")
    (tmp_path / "outside.md").write_text("TOP-SECRET-CONTENT", encoding="utf-8")
    (vault / "link-out.md").symlink_to(outside / "secret.md")
    (vault / "linked-dir").symlink_to(outside, target_is_directory=True)
    for tool, args in (("read_note", {"path": path}), ("get_chunk", {"chunk_id": f"{path}:0"})):
        message = await _error(Settings(vault=vault), tool, args)
        assert "TOP-SECRET" not in message
        assert any(w in message for w in ("leaves the vault", "absolute", "outside the vault"))


@pytest.mark.parametrize(("path", "why"), [
    ("inbox.md\x00.txt", "'inbox.md\\x00.txt': a path cannot contain a NUL byte"),
    ("\x00", "a path cannot contain a NUL byte"),
    ("latin1-\udce9.md", "Input should be a valid string"),  # refused as an argument already
])
async def test_a_nul_byte_or_a_name_that_is_not_utf8_is_refused_like_any_bad_path(
        vault: Path, path: str, why: str, caplog: pytest.LogCaptureFixture) -> None:
    (vault / "latin1-\udce9.md").write_text("TOP-SECRET-CONTENT")
    for tool, args in (("read_note", {"path": path}), ("get_chunk", {"chunk_id": f"{path}:0"})):
        message = await _error(Settings(vault=vault), tool, args)
        assert message.startswith(f"Error executing tool {tool}: ") and why in message, message
        assert "TOP-SECRET" not in message
    assert not [r for r in caplog.records if r.exc_info], "the server logged a traceback"
    found = await _ok(Settings(vault=vault), "search_notes", {"query": "inbox"})
    assert found["results"]



@pytest.mark.parametrize(("tool", "arguments", "shown"), [
    ("read_note", {"path": "notes\nheapsort.md"}, "notes\\nheapsort.md: note not found"),
    ("get_chunk", {"chunk_id": "a\r\nb.md:0"}, "a\\r\\nb.md: note not found"),
    ("read_note", {"path": "../up\n.md"}, "../up\\n.md: path leaves the vault"),
    ("read_note", {"path": "x\u2028y\u202e.md"}, "x\\u2028y\\u202e.md: note not found"),
    ("refresh_notebook", {"paths": ["gone\n.md"]}, "gone\\n.md: note not found"),
])
async def test_a_path_with_a_line_break_gives_a_one_line_error_showing_it(
        vault: Path, tool: str, arguments: dict[str, Any], shown: str) -> None:
    message = await _error(Settings(vault=vault), tool, arguments)
    assert message.startswith(f"Error executing tool {tool}: ") and shown in message, message
    assert "\n" not in message and "\r" not in message and message.isprintable()

@pytest.mark.parametrize(("path", "why"), [
    ("private/diary-secret.md", "front matter"),
    (".nlmsync/state.db", "not a note"),
    (".obsidian/workspace.md", "not a note"),
    ("quirks/binary-image.md", "binary"),
    ("nowhere/missing.md", "not found"),
])
async def test_unservable_notes_get_a_clear_error(vault: Path, path: str, why: str) -> None:
    message = await _error(Settings(vault=vault), "read_note", {"path": path})
    assert why in message and path in message
    assert "Personal thoughts" not in message


@pytest.mark.parametrize(("path", "why"), [
    ("alias.md", "journal/2026-05-10.md: excluded from nlmsync by the exclude setting (alias.md links to it)"),
    ("cooking/linked/2026-05-10.md", "journal/2026-05-10.md: excluded"),
    ("settings-alias.md", ".obsidian/workspace.md: not a note of the vault"),
    ("Journal/2026-05-10.md", "Journal/2026-05-10.md: excluded"),  # what a case-insensitive disk would open
    (".Obsidian/workspace.md", "not a note of the vault"),
])
async def test_links_and_case_variants_do_not_reach_unserved_notes(vault: Path, path: str, why: str) -> None:
    (vault / "alias.md").symlink_to(vault / "journal/2026-05-10.md")
    (vault / "cooking/linked").symlink_to(vault / "journal", target_is_directory=True)
    (vault / "settings-alias.md").symlink_to(vault / ".obsidian/workspace.md")
    settings = Settings(vault=vault, exclude=["journal/**"])
    for tool, args in (("read_note", {"path": path}), ("get_chunk", {"chunk_id": f"{path}:0"})):
        assert why in await _error(settings, tool, args)
    found = await _ok(settings, "search_notes", {"query": "slow sunday sourdough oven spring", "limit": 50})
    assert not [r for r in found["results"] if "2026-05-10" in r["path"] or r["path"] == "alias.md"]


async def test_glob_excluded_note_is_refused(vault: Path) -> None:
    message = await _error(Settings(vault=vault, exclude=["journal/**"]), "read_note",
                           {"path": "journal/2026-05-10.md"})
    assert "excluded" in message


@pytest.mark.parametrize(("tool", "arguments", "field"), [
    ("search_notes", {"query": ""}, "query"),
    ("search_notes", {"query": "x", "limit": 0}, "limit"),
    ("read_note", {"path": TRANSCRIPT, "chunk": -1}, "chunk"),
    ("read_note", {"path": TRANSCRIPT, "chunks": "9-2"}, "chunks"),
    ("read_note", {"path": TRANSCRIPT, "chunk": 999}, "chunk"),
    ("read_note", {"path": TRANSCRIPT, "start_time": "later"}, "start_time"),
    ("read_note", {"path": "algorithms/sorting/heapsort.md", "start_time": "0:10"}, "timestamps"),
    ("read_note", {"path": TRANSCRIPT, "chunk": 1, "chunks": "1-2"}, "not both"),
    ("get_chunk", {"chunk_id": "no-index-here"}, "chunk_id"),
    ("get_chunk", {"chunk_id": f"{TRANSCRIPT}:1", "surrounding": 9}, "surrounding"),
    ("read_note", {}, "path: Field required"),
    ("search_notes", {"query": "x", "limit": "many"}, "limit: Input should be a valid integer"),
    ("read_note", {"path": TRANSCRIPT, "chunck": 3}, "chunck: unknown argument (read_note takes path, chunk,"),
    ("get_chunk", {"chunk_id": f"{TRANSCRIPT}:999"}, "chunk_id: chunk 999 out of range"),
    ("refresh_notebook", {"paths": "Home.md"}, "paths: Input should be a valid list (got 'Home.md')"),
    ("refresh_notebook", {"paths": ["Home.md", 7]}, "paths.1: Input should be a valid string (got 7)"),
    ("read_note", {"path": TRANSCRIPT, "start_time": -5}, "read_note: start_time: Input should be greater"),
])
async def test_invalid_arguments_name_the_field(vault: Path, tool: str, arguments: dict[str, Any],
                                                field: str) -> None:
    message = await _error(Settings(vault=vault), tool, arguments)
    assert field in message
    assert message.startswith(f"Error executing tool {tool}: ") and "\n" not in message
    assert "errors.pydantic.dev" not in message


async def test_concurrent_searches_all_succeed(vault: Path) -> None:
    queries = ["heapsort", "kimchi", "dijkstra shortest path", "sourdough starter", "asyncio task", "京都"] * 5
    results: dict[int, Any] = {}
    with serving(Settings(vault=vault)) as server:
        async with Client(server) as client:

            async def one(i: int, query: str) -> None:
                results[i] = await client.call_tool("search_notes", {"query": query, "limit": 3})

            with anyio.fail_after(60):
                async with anyio.create_task_group() as tg:
                    for i, query in enumerate(queries):
                        tg.start_soon(one, i, query)
    assert len(results) == len(queries)
    assert all(not r.is_error and answer(r)["results"] for r in results.values())


async def test_searches_run_at_the_same_time(vault: Path) -> None:
    """Two searches meet inside the index at once: were they serialized, the first would wait alone."""
    settings = Settings(vault=vault)
    index = NoteIndex(vault, None, settings)
    meet = threading.Barrier(2, timeout=30)
    search = index.search

    def meeting_search(query: str, limit: int | None = None, **options: Any) -> list[Any]:
        meet.wait()
        return search(query, limit, **options)

    index.search = meeting_search  # type: ignore[method-assign, assignment]
    results: list[Any] = []
    async with Client(build_server(settings, index)) as client:

        async def one(query: str) -> None:
            results.append(await client.call_tool("search_notes", {"query": query, "limit": 1}))

        with anyio.fail_after(60):
            async with anyio.create_task_group() as tg:
                tg.start_soon(one, "heapsort")
                tg.start_soon(one, "kimchi")
    assert [r.is_error for r in results] == [False, False], [r.content for r in results]


def _tools(vault: Path) -> VaultTools:
    settings = Settings(vault=vault)
    return VaultTools(settings, NoteIndex(vault, None, settings))


def test_an_edited_note_is_searched_as_it_is_now(vault: Path) -> None:
    tools = _tools(vault)
    note = vault / "cooking/shakshuka.md"
    assert tools.search_notes("shakshuka", 1).results[0].path == "cooking/shakshuka.md"
    note.write_text("# Shakshuka\n\nNow with zaatar sprinkled on top.\n", encoding="utf-8")
    tools.index.mark_path_modified("cooking/shakshuka.md")
    found = tools.search_notes("shakshuka zaatar", 1).results[0]
    assert "zaatar" in found.chunks[0].snippet


def test_a_large_note_is_cut_into_chunks_once_across_calls(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cuts: list[int] = []

    def counting_plan(text: str, settings: Settings) -> ChunkPlan:
        cuts.append(len(text))
        return plan_chunks(text, settings)

    monkeypatch.setattr(vault_tools, "plan_chunks", counting_plan)
    monkeypatch.setattr(reading, "plan_chunks", counting_plan)
    tools = _tools(vault)
    tools.read_note(TRANSCRIPT)
    tools.read_note(TRANSCRIPT, chunks="3-5")
    tools.read_note(TRANSCRIPT, query="dead letter queue")
    tools.get_chunk(f"{TRANSCRIPT}:7", 1)
    tools.search_notes("dead letter queue replay", 3)
    assert cuts.count(len((vault / TRANSCRIPT).read_text(encoding="utf-8"))) == 1  # other hits once each too
    assert len(cuts) == len(set(cuts))


def test_plan_cache_is_bounded_by_characters(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vault_tools, "PLAN_CACHE_CHARS", 3000)
    tools = _tools(vault)
    for query in ("heapsort", "kimchi", "dijkstra", "sourdough", "asyncio", "thermodynamics", "git"):
        tools.search_notes(query, 5)
    assert 0 < tools._cached_chars <= 3000 or len(tools._plans) == 1
    assert tools._cached_chars == sum(len(text) for text, _ in tools._plans.values())
