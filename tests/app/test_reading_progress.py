"""A `refresh --all` reports how far it got reading the vault's notes: the display moves through the reading,
before the first pack is uploaded, instead of sitting at 0 until then."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.anyio

NOTES = 300


class Recorder:
    """A progress display that writes down what it is told, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def start(self, label: str, total: int) -> None:
        self.seen.append(("start", (label, total)))

    def advance(self, outcome) -> None:
        self.seen.append(("advance", outcome.path))

    def indexing(self, done: int, total: int) -> None:
        self.seen.append(("indexing", (done, total)))

    def reading(self, done: int, total: int) -> None:
        self.seen.append(("reading", (done, total)))


async def test_refresh_all_reports_its_reading_of_the_notes_before_the_uploads(make_world):
    world = make_world(capacity=10)
    for i in range(NOTES):
        world.write(f"f{i % 5}/n{i:03}.md", f"# Note {i}\n\nThe body of note {i} about topic{i % 7}.\n")
    async with world.run(pack="always", source_max_bytes=4_000) as orch:
        orch.progress = recorder = Recorder()
        report = await orch.refresh(all_notes=True)
    assert report.packs
    reading = [(i, value) for i, (kind, value) in enumerate(recorder.seen) if kind == "reading"]
    counts = [done for _, (done, total) in reading if total == NOTES]
    assert counts[0] == 0 and counts[-1] == NOTES
    assert counts == sorted(counts) and len(set(counts)) >= 4  # it moves through the reading, not 0 then all
    uploading = recorder.seen.index(("start", ("uploading packs", len(report.packs))))
    assert reading[-1][0] < uploading  # the whole reading is reported before the first upload starts
