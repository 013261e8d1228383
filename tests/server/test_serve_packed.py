"""`ask_notebook` and `refresh_notebook` on a packed notebook of 6,000 notes, over a stdio session as an MCP client
runs them: each answer carries what a model needs (the answer, each citation's note, heading and quote, what was
uploaded) within 8 KB, while the command line's `--json` keeps the full lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.cli_helpers import run_cli
from tests.server.answers import answer, serve_over_stdio

NOTE_COUNT = 6_000
ANSWER_BUDGET = 8_192  # bytes of one tool answer
LANGUAGES = ("en", "de", "es", "fr", "it", "ja", "ko", "pt", "ru", "zh", "nl", "pl", "tr", "uk", "vi", "ar",
             "cs", "da", "fa", "fi", "he", "hi", "hu", "id", "ms", "nb", "ro", "sv", "th", "el", "bg", "ca",
             "lt", "sk")
SECTIONS = ("Plugins", "Editing and formatting", "Files and folders", "Getting started", "Linking notes",
            "Obsidian Sync")
WORDS = ("canvas", "card", "note", "link", "graph", "vault", "sync", "publish", "plugin", "theme", "snippet",
         "folder", "file", "heading", "block", "embed", "template", "daily", "search", "command", "palette",
         "hotkey", "workspace", "pane", "tab", "bookmark", "outline", "backlink", "tag", "alias")
# Small notes and small sources, so that 6,000 notes need the notebook's 47 free sources as a help vault of that
# size does with full-size sources: what an answer costs grows with the notes per pack, not with their size.
CONFIG = "capacity = 50\nsource_max_bytes = 22000\n"


def _help_vault(root: Path) -> list[str]:
    """6,000 short notes laid out like a multilingual help vault (`LANG/SECTION/Title N.md`); their paths."""
    paths = []
    for i in range(NOTE_COUNT):
        first, second, third, fourth = (WORDS[(i * k) % len(WORDS)] for k in (1, 7, 13, 3))
        path = f"{LANGUAGES[i % len(LANGUAGES)]}/{SECTIONS[i % len(SECTIONS)]}/{first.capitalize()} {second} {i}.md"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {first} {second}\n\n## About {third}\n\nThe {first} {second} of note {i} holds a "
                                 f"{third} and a {fourth}.\n", encoding="utf-8")
        paths.append(path)
    (root / ".nlmsync").mkdir()
    (root / ".nlmsync" / "config.toml").write_text(CONFIG, encoding="utf-8")
    return paths


def _size(result: Any) -> int:
    (block,) = result.content
    return len(block.text.encode())


@pytest.mark.slow  # 6,000 notes mirrored, then a server process
def test_answers_on_a_packed_notebook_are_lean_and_say_what_a_model_needs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    vault = tmp_path / "help"
    _help_vault(vault)
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "--notebook", "new:Help", "refresh",
                             "--all", "--json")
    assert code == 0, err
    layout = json.loads(out)["layout"]
    assert layout["packed_note_count"] == NOTE_COUNT and layout["pack_count"] >= 40
    edited = "en/Plugins/Canvas canvas 1020.md"
    with (vault / edited).open("a", encoding="utf-8") as note:
        note.write("More about the canvas graph.\n")
    question = "canvas graph note"

    async def session() -> list[Any]:
        with anyio.fail_after(300):
            async with Client(serve_over_stdio(vault, "--server", "fake")) as client:
                return [await client.call_tool("refresh_notebook", {"dry_run": True}),
                        await client.call_tool("ask_notebook", {"question": question, "new": True}),
                        await client.call_tool("refresh_notebook", {})]

    planned, asked, idle = anyio.run(session)

    for result in (planned, asked, idle):
        assert _size(result) < ANSWER_BUDGET
    plan = answer(planned)
    assert plan["dry_run"] and plan["pack_counts"] == {"reused": layout["pack_count"] - 1, "replaced": 1}
    [change] = plan["changes"]
    assert change["done"] == "replaced" and edited in change["reason"] and change["note_count"] > 100

    asked_answer = answer(asked)
    assert asked_answer["answer"] and asked_answer["conversation_id"]
    assert asked_answer["selected_notes"][0] == edited
    assert asked_answer["citations"]
    for citation in asked_answer["citations"]:
        assert (vault / citation["path"]).is_file() and citation["heading"] and citation["quote"]
    assert edited in [c["path"] for c in asked_answer["citations"]]
    [uploaded] = asked_answer["changes"]  # the pack holding the edited note, replaced to ask the question
    assert uploaded["done"] == "replaced" and edited in uploaded["reason"] and uploaded["note_count"] > 100
    assert asked_answer["sources_asked"] >= 1 and "packs" not in asked_answer

    assert answer(idle)["pack_counts"] == {"reused": layout["pack_count"]} and answer(idle)["changes"] == []

    # the command line's --json keeps every note of every pack it used
    code, out, err = run_cli(capsys, "--vault", str(vault), "--server", "fake", "ask", question, "--new", "--json")
    assert code == 0, err
    full = json.loads(out)
    assert sum(len(pack["paths"]) for pack in full["packs"]) > 100 and len(out.encode()) > ANSWER_BUDGET
