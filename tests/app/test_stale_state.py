"""A state file older than the notebook — restored from a backup, or left behind while another device ran — is a
cache brought level with the notebook: once a run made the notebook correct, `status` is clean, and the records of
packs the notebook no longer holds are dropped."""

from __future__ import annotations

import shutil

import pytest
from tests.app.notebook_checks import assert_mirrored, fill, note_text, write_note

pytestmark = pytest.mark.anyio

PACKED = {"pack": "always", "source_max_bytes": 1_500, "pack_free": 1}


async def mirror(device, **settings: object):
    async with device.run(**PACKED, **settings) as orch:
        return await orch.refresh(all_notes=True)


async def status(device):
    async with device.run(**PACKED) as orch:
        return await orch.status()


def clean(report) -> None:
    assert report.next_steps == [], [s.command for s in report.next_steps]
    assert all(p.live for p in report.packs), [p.title for p in report.packs if not p.live]
    assert report.local_changes == [] and report.stale_sources == []


async def test_an_older_state_file_restored_is_forgotten_where_the_notebook_moved_on(make_world, tmp_path):
    world = make_world(capacity=20)
    laptop = world.device("laptop")
    paths = fill(laptop.vault, 60)
    await mirror(laptop, notebook=world.notebook_id, capacity=20)
    backup = tmp_path / "backup"
    shutil.copytree(laptop.state.parent, backup)
    (laptop.vault / paths[20]).unlink()
    write_note(laptop.vault, paths[40], note_text(40, 2))
    await mirror(laptop)
    clean(await status(laptop))
    shutil.rmtree(laptop.state.parent)
    shutil.copytree(backup, laptop.state.parent)  # the older state file restored
    mark = len(world.fake.calls)
    await mirror(laptop)
    assert world.mutating_calls(mark) == []
    clean(await status(laptop))
    assert_mirrored(world, laptop.vault)


async def test_status_after_another_device_replaced_a_pack_says_nothing_is_missing(make_world):
    world = make_world(capacity=20)
    laptop, desktop = world.device("laptop"), world.device("desktop")
    paths = fill(laptop.vault, 60)
    await mirror(laptop, notebook=world.notebook_id, capacity=20)
    desktop.sync_from(laptop)  # notes and state file
    write_note(desktop.vault, paths[30], note_text(30, 2))
    await mirror(desktop)
    laptop.sync_from(desktop, state=False)  # the edit arrives; the laptop keeps its own state file
    report = await status(laptop)
    # the pack the desktop uploaded is taken as this device's, and said so: nothing is missing, nothing to upload
    assert not any("missing" in s.command or "uploads" in s.command for s in report.next_steps), report.next_steps
    assert [n[:16] for n in report.notices] == ["adopted 1 source"], report.notices
    assert all(p.live for p in report.packs)
    mark = len(world.fake.calls)
    refreshed = await mirror(laptop)
    assert world.mutating_calls(mark) == []
    assert [p.branch for p in refreshed.packs if p.branch != "reused"] == []  # the replaced pack is no news
    clean(await status(laptop))
