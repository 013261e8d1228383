"""Audio and video, which NotebookLM takes minutes to process, against the in-process fake made to take a while
(`processing_polls`): the notes and documents of the run are uploaded and recorded while a video is still
processing, the video ends up live and recorded, and one that outlasts the wait is reported while the rest syncs."""

from __future__ import annotations

from typing import Any

import pytest
from tests.app.test_attachment_sync import put_pdf
from tests.app.world import World, stopped_report

from nlmsync.documents import hash_file
from nlmsync.errors import PartialFailure
from nlmsync.fake.faults import Faults
from nlmsync.sync.branches import Branch
from nlmsync.sync.report import NoteOutcome, PackOutcome
from nlmsync.sync.titles import source_title, upload_name

pytestmark = pytest.mark.anyio


class Reported:
    """A progress display that keeps the order outcomes are recorded in, and whether the fake was still processing
    a file when each was."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.order: list[tuple[str, bool]] = []

    def start(self, label: str, total: int) -> None: ...

    def advance(self, outcome: NoteOutcome | PackOutcome) -> None:
        if isinstance(outcome, NoteOutcome):
            self.order.append((outcome.path, self.world.fake.polls.waiting > 0))

    def indexing(self, done: int, total: int) -> None: ...

    def reading(self, done: int, total: int) -> None: ...


def vault_with_a_video(world: World) -> str:
    world.write("a.md", "# A\nalpha\n")
    world.write("b.md", "# B\nbeta\n")
    put_pdf(world, "papers/okapis.pdf", "Okapis live in the Ituri forest")
    put_pdf(world, "papers/tapirs.pdf", "Tapirs are odd-toed ungulates")
    video = world.vault / "aa-talk.mp4"  # first of the attachments by path
    video.write_bytes(b"not really a video, but NotebookLM takes it")
    return source_title("aa-talk.mp4", hash_file(video)[0])


async def test_notes_and_pdfs_are_uploaded_and_recorded_while_a_video_is_processing(make_world: Any) -> None:
    world = make_world(attachments=["documents", "video"], faults=Faults(processing_polls=150))
    title = vault_with_a_video(world)
    reported = Reported(world)
    async with world.run() as orch:
        orch.progress = reported
        report = await orch.refresh(all_notes=True)
    branches = {n.path: n.branch for n in report.notes}
    assert set(branches.values()) == {Branch.ADDED} and len(branches) == 5
    order = [path for path, _ in reported.order]
    assert order[-1] == "aa-talk.mp4"  # the video, first to start, recorded last: nothing waited for it
    pdfs = [(path, processing) for path, processing in reported.order if path.endswith(".pdf")]
    assert pdfs == [("papers/okapis.pdf", True), ("papers/tapirs.pdf", True)]  # recorded while it processed
    assert title in world.remote().values()  # the title the server's rename gave it once processed
    store = world.store()
    (row,) = store.mappings_by_path(world.notebook_id, "aa-talk.mp4")
    assert (world.remote()[row.source_id], row.title) == (title, title)
    mark = len(world.fake.calls)
    async with world.run() as orch:
        again = await orch.refresh(all_notes=True)
    assert {n.branch for n in again.notes} == {Branch.REUSED} and world.mutating_calls(mark) == []


async def test_a_video_still_processing_when_the_wait_runs_out_is_reported_and_taken_by_the_next_run(
        make_world: Any) -> None:
    world = make_world(attachments=["documents", "video"], media_timeout=30, faults=Faults(processing_polls=40))
    title = vault_with_a_video(world)
    async with world.run() as orch:
        with pytest.raises(PartialFailure) as raised:
            await orch.refresh(all_notes=True)
    report = stopped_report(raised.value)
    (video,) = [n for n in report.notes if n.path == "aa-talk.mp4"]
    assert video.branch == Branch.FAILED
    assert video.error == ("NotebookLM was still processing it when the wait ran out (30 s, the media_timeout "
                           "setting): its source stays in the notebook, and the next run takes it without uploading "
                           "it again")
    assert {n.branch for n in report.notes if n.path != "aa-talk.mp4"} == {Branch.ADDED}  # the rest synced
    assert upload_name(title, ".mp4") in world.remote().values()  # named after the upload's file, unprocessed
    mark = len(world.fake.calls)
    world.fake.faults = Faults()
    async with world.run() as orch:
        again = await orch.refresh(all_notes=True)
    assert {n.path: n.branch for n in again.notes}["aa-talk.mp4"] == Branch.REUSED  # taken from the notebook
    assert world.calls("source_add", since=mark) == 0  # not uploaded again
    assert title in world.remote().values()  # and given its title
