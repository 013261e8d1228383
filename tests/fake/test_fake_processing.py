"""Audio and video that take the fake a while to process (`--processing-polls`): an add that waits answers once the
file is processed, other calls are answered meanwhile, and a wait that runs out is the real server's error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from nlmsync.fake import FakeNotebookLM, Faults, build_fake_server
from nlmsync.fake.faults import parse_fake_options

pytestmark = pytest.mark.anyio


def _file(tmp_path: Path, name: str) -> str:
    path = tmp_path / name
    path.write_bytes(b"not really a recording")
    return str(path)


async def _call(client: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    return dict(result.structured_content or {})


def _add(nb: str, file_path: str, title: str, wait_timeout: float = 600.0) -> dict[str, Any]:
    return {"notebook_id": nb, "source_type": "file", "file_path": file_path, "title": title, "wait": True,
            "wait_timeout": wait_timeout}


async def test_a_recording_is_processed_over_polls_while_other_calls_are_answered(tmp_path: Path) -> None:
    import mcp

    fake = FakeNotebookLM(faults=Faults(processing_polls=4))
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    talk = _file(tmp_path, "talk.mp3")
    seen: list[list[str]] = []
    async with mcp.Client(build_fake_server(fake)) as client, anyio.create_task_group() as tg:
        answers: dict[str, Any] = {}

        async def add() -> None:
            answers["talk"] = await _call(client, "source_add", _add(nb, talk, "talk.mp3 · 0123abcd"))

        tg.start_soon(add)
        with anyio.fail_after(30):
            while fake.polls.waiting == 0:
                await anyio.sleep(0)
            for _ in range(2):  # two calls answered: two polls; the recording is still processing
                listing = await _call(client, "notebook_get", {"notebook_id": nb})
                seen.append([s["title"] for s in listing["sources"]])
            assert "talk" not in answers
    assert seen == [["talk.mp3"], ["talk.mp3"]]  # named after its file until processed
    assert answers["talk"]["status"] == "success" and answers["talk"]["title"] == "talk.mp3 · 0123abcd"
    assert [s.title for s in fake.notebooks[nb].sources.values()] == ["talk.mp3 · 0123abcd"]


async def test_a_recording_not_processed_within_the_wait_is_the_real_servers_error(tmp_path: Path) -> None:
    import mcp

    fake = FakeNotebookLM(faults=parse_fake_options(["--processing-polls", "50"]).faults)
    nb = fake.apply("notebook_create", {"title": "N"})["notebook_id"]
    talk, paper = _file(tmp_path, "talk.mp4"), _file(tmp_path, "notes.txt")
    async with mcp.Client(build_fake_server(fake)) as client:
        with anyio.fail_after(30):  # 50 polls 3 s apart outlast 30 s: the wait runs out after 10
            answer = await _call(client, "source_add", _add(nb, talk, "talk.mp4 · 0123abcd", wait_timeout=30))
            text = await _call(client, "source_add", _add(nb, paper, "notes.txt · 4567cdef"))
    (source_id,) = [sid for sid, s in fake.notebooks[nb].sources.items() if s.title == "talk.mp4"]
    assert answer["status"] == "error"
    assert answer["error"] == f"Could not add file source: Source {source_id} not ready after 30.0s"
    assert text["status"] == "success"  # a document is not held up: it is processed at once
    assert fake.calls[1].status == "error"
