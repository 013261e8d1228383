"""`--notebook new:TITLE` when the state file does not know the notebook: the one the server has under that exact
title is adopted, never a second one created, and its sources are taken back instead of uploaded again."""

from __future__ import annotations

import pytest

from nlmsync.sync.branches import Branch
from nlmsync.sync.titles import source_title, title_hash

pytestmark = pytest.mark.anyio

NOTES = {
    "sorting/heapsort.md": "# Heapsort\n\nHeapsort sorts an array in place with a max-heap.\n",
    "cooking/sourdough.md": "# Sourdough\n\nFeed the starter flour and water; bake the loaf hot.\n",
}


def fill(world) -> None:
    for rel, text in NOTES.items():
        world.write(rel, text)


def titled(world, title: str) -> list[str]:
    return [nb.id for nb in world.fake.notebooks.values() if nb.title == title]


async def test_a_state_file_moved_aside_finds_the_notebook_and_its_sources_again(make_world):
    world = make_world()
    fill(world)
    async with world.run(notebook="new:Vault") as orch:
        first = await orch.refresh(list(NOTES))
    world.settings.state_path.rename(world.root / "aside.db")
    since = len(world.fake.calls)
    async with world.run(notebook="new:Vault") as orch:
        second = await orch.refresh(list(NOTES))
        assert orch.store.default_notebook() == first.notebook_id
    assert second.notebook_id == first.notebook_id and titled(world, "Vault") == [first.notebook_id]
    assert world.mutating_calls(since) == []  # nothing created, nothing uploaded again
    assert {n.branch for n in second.notes} <= {Branch.ADDED, Branch.REUSED}
    assert any(first.notebook_id in n and "Vault" in n for n in second.notices)


async def test_an_empty_notebook_left_by_a_create_whose_run_died_is_adopted(make_world):
    world = make_world()
    fill(world)
    left = world.fake.apply("notebook_create", {"title": "Died"})["notebook_id"]
    async with world.run(notebook="new:Died") as orch:
        report = await orch.refresh(["sorting/heapsort.md"])
    assert report.notebook_id == left and titled(world, "Died") == [left]
    assert world.mutating_calls().count("notebook_create") == 1  # the one above


async def test_a_notebook_with_a_title_that_only_starts_the_same_is_not_adopted(make_world):
    world = make_world()
    fill(world)
    other = world.fake.apply("notebook_create", {"title": "Vault archive"})["notebook_id"]
    async with world.run(notebook="new:Vault") as orch:
        report = await orch.refresh(["sorting/heapsort.md"])
    assert report.notebook_id != other and len(titled(world, "Vault")) == 1


async def test_of_several_notebooks_with_the_title_the_one_holding_nlmsync_sources_is_picked_and_named(make_world):
    world = make_world()
    fill(world)
    text = NOTES["sorting/heapsort.md"]
    ids = [world.fake.apply("notebook_create", {"title": "Twice"})["notebook_id"] for _ in range(3)]
    world.fake.apply("source_add", {"notebook_id": ids[0], "source_type": "text", "text": "my own notes",
                                    "title": "Pasted Text"})
    world.fake.apply("source_add", {"notebook_id": ids[1], "source_type": "text", "text": text,
                                    "title": source_title("sorting/heapsort.md", title_hash(text))})
    since = len(world.fake.calls)
    async with world.run(notebook="new:Twice") as orch:
        report = await orch.refresh(["sorting/heapsort.md"])
    assert report.notebook_id == ids[1]
    assert "notebook_create" not in world.mutating_calls(since) and "source_add" not in world.mutating_calls(since)
    (notice,) = [n for n in report.notices if "Twice" in n]
    assert notice == (f"3 notebooks on the server are titled 'Twice': using {ids[1]} (1 source titled as nlmsync's "
                      f"uploads); not {ids[0]} (0 sources titled as nlmsync's uploads), {ids[2]} (0 sources titled "
                      "as nlmsync's uploads)")


async def test_a_dry_run_plans_on_the_notebook_the_server_has_under_the_title(make_world):
    world = make_world()
    fill(world)
    existing = world.fake.apply("notebook_create", {"title": "Planned"})["notebook_id"]
    async with world.run(notebook="new:Planned") as orch:
        plan = await orch.refresh(["sorting/heapsort.md"], dry_run=True)
        assert orch.store.default_notebook() is None  # a dry run records nothing
    assert plan.notebook_id == existing and world.mutating_calls() == ["notebook_create"]


async def test_of_two_notebooks_recorded_under_the_title_the_vaults_own_is_used(make_world):
    """`new:TITLE` when the state file knows two notebooks of that title (one made on another machine, say, and
    used once): the notebook later runs use is the one taken, not the one recorded last."""
    world = make_world()
    fill(world)
    async with world.run(notebook="new:Vault") as orch:
        first = (await orch.refresh(["sorting/heapsort.md"])).notebook_id
        later = world.fake.apply("notebook_create", {"title": "Vault"})["notebook_id"]
        orch.store.record_notebook(later, "Vault")
        assert orch.store.default_notebook() == first
    async with world.run(notebook="new:Vault") as orch:
        report = await orch.refresh(["sorting/heapsort.md"])
    assert report.notebook_id == first


async def test_a_run_on_a_notebook_by_its_title_makes_it_the_vaults_notebook_again(make_world):
    world = make_world()
    fill(world)
    async with world.run(notebook="new:Vault") as orch:
        first = (await orch.refresh(["sorting/heapsort.md"])).notebook_id
    other = world.fake.apply("notebook_create", {"title": "Other"})["notebook_id"]
    async with world.run(notebook=other) as orch:
        await orch.refresh(["cooking/sourdough.md"])
        assert orch.store.default_notebook() == other
    async with world.run(notebook="new:Vault") as orch:
        await orch.refresh(["cooking/sourdough.md"])
        assert orch.store.default_notebook() == first
    async with world.run(notebook=None) as orch:  # no --notebook: the one used last
        assert (await orch.refresh(["sorting/heapsort.md"])).notebook_id == first
