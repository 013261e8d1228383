"""Crash points of a refresh with attachments: every mutating call of a scripted `refresh --all` over notes, two
PDFs and an image (images opted in), dropped or killed before and after the server applied it, with the server
applying file titles and with its rename of them not taking (`file_titles_ignored`); a second refresh must reach
what an uninterrupted run reaches — every file live once under its title with its current bytes, no duplicate, no
orphan, the registry agreeing with the notebook.

Scenario (capacity 12): three notes, two PDFs and an image live; then a note and a PDF edited, the other PDF
moved, a new PDF: the refresh replaces (a note and a PDF), renames (a PDF, retitled), adds (a PDF) and reuses the
rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from tests.app.crash import Snapshot, assert_converged, consistent_rows, crash_and_rerun
from tests.app.world import new_world
from tests.documents.pdfs import pdf, text_page

from nlmsync.documents import hash_file
from nlmsync.fake.faults import Faults, When
from nlmsync.sync.titles import source_title

pytestmark = pytest.mark.anyio

CAPACITY = 12
SETTINGS: dict[str, Any] = {"attachments": ["documents", "images"]}
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 64


def put_pdf(vault: Path, rel: str, line: str) -> None:
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_bytes(pdf(text_page(line), text_page(f"{line}, page two")))


async def build_base(world) -> None:
    for i in range(3):
        world.write(f"n{i}.md", f"# Note {i}\n\nVersion 1 of note {i}.\n")
    put_pdf(world.vault, "papers/a.pdf", "tapirs are odd-toed ungulates")
    put_pdf(world.vault, "papers/b.pdf", "okapis live in the forest")
    (world.vault / "shot.png").write_bytes(PNG)
    async with world.run(**SETTINGS) as orch:
        await orch.refresh(all_notes=True)
    world.write("n1.md", "# Note 1\n\nVersion 2 of note 1.\n")
    put_pdf(world.vault, "papers/a.pdf", "tapirs are odd-toed ungulates, second edition")
    (world.vault / "read").mkdir()
    (world.vault / "papers/b.pdf").rename(world.vault / "read/b.pdf")
    put_pdf(world.vault, "papers/c.pdf", "giraffes have long necks")


def observe(world, state: Path) -> tuple[Any, ...]:
    """Everything that must be equal between runs, with source ids replaced by what they hold."""
    remote = world.fake.notebooks[world.notebook_id].sources
    titles = [s.title for s in remote.values()]
    registry = sorted((r.path, r.content_hash, r.title) for r in consistent_rows(world, state))
    for rel in ("papers/a.pdf", "read/b.pdf", "papers/c.pdf", "shot.png"):
        assert source_title(rel, hash_file(world.vault / rel)[0]) in titles, f"{rel} is not live as it is now"
    return tuple(sorted((s.title, s.text) for s in remote.values())), tuple(registry)


CALLS = {False: {"source_add": 3, "source_delete": 2, "source_rename": 1},
         True: {"source_add": 3, "source_delete": 2, "source_rename": 3}}
"""Every mutating call of the uninterrupted refresh; with titles ignored, each added file is renamed after."""
POINTS = [pytest.param(ignored, mode, tool, nth, when, id=f"{'ignored-' if ignored else ''}{mode}-{tool}#{nth}-{when}",
                       marks=() if (tool, nth) == ("source_add", 2) and mode == "kill" else pytest.mark.slow)
          for ignored in (False, True) for mode in ("drop", "kill") for tool, total in CALLS[ignored].items()
          for nth in range(1, total + 1) for when in ("before", "after")]


@dataclass
class Base:
    snapshot: Snapshot
    calls: dict[str, int]
    expected: tuple[Any, ...]


def _base(factory: pytest.TempPathFactory, ignored: bool) -> Base:
    world = new_world(factory.mktemp("attachment-crash-base"), capacity=CAPACITY,
                      faults=Faults(file_titles_ignored=ignored))
    anyio.run(build_base, world)
    snapshot = Snapshot.take(world, CAPACITY)
    reference, state = snapshot.restore(world.root / "reference", Faults(file_titles_ignored=ignored))

    async def refresh() -> None:
        async with reference.run(state=state, **SETTINGS) as orch:
            await orch.refresh(all_notes=True)

    anyio.run(refresh)
    calls = {tool: reference.calls(tool) for tool in CALLS[ignored]}
    return Base(snapshot, calls, observe(reference, state))


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Base]:
    return {ignored: _base(tmp_path_factory, ignored) for ignored in (False, True)}


def test_the_uninterrupted_refresh_makes_every_call_counted(bases: dict[bool, Base]) -> None:
    assert {ignored: base.calls for ignored, base in bases.items()} == CALLS


@pytest.mark.parametrize(("ignored", "mode", "tool", "nth", "when"), POINTS)
async def test_every_crash_point_converges(bases: dict[bool, Base], tmp_path: Path, ignored: bool, mode: str,
                                           tool: str, nth: int, when: When) -> None:
    base = bases[ignored]
    assert base.calls == CALLS[ignored], "the scenario changed: see test_the_uninterrupted_refresh_makes_every_call_counted"
    point = (mode, tool, nth, when)
    world, state = await crash_and_rerun(base.snapshot, tmp_path, point, lambda orch: orch.refresh(all_notes=True),
                                         SETTINGS, Faults(file_titles_ignored=ignored))
    assert_converged(observe(world, state), base.expected, point)
