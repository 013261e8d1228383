"""Settings that describe a notebook stay with it: the notebook a run was given (by id, as by `new:TITLE`) is the
one later runs use, and a capacity given once holds for that notebook on later runs that give none, until
another is given; `status` says the capacity and where the figure comes from."""

from __future__ import annotations

import pytest

from nlmsync.sync.branches import Branch

pytestmark = pytest.mark.anyio


async def test_a_notebook_given_by_id_is_remembered_by_later_runs(make_world):
    world = make_world()
    laptop = world.device("laptop")
    laptop.write("a.md", "# A\n\nAlpha.\n")
    async with laptop.run(server="fake", notebook=world.notebook_id) as orch:
        await orch.refresh(["a.md"])
    async with laptop.run(server="fake") as orch:  # no --notebook: the one used last
        status = await orch.status()
        answer = await orch.ask("What is alpha?")
    assert status.notebook_id == world.notebook_id and answer.notebook_id == world.notebook_id


@pytest.mark.parametrize("look", ["status", "sources", "reconcile"])
async def test_a_fresh_machine_takes_the_notebook_it_first_looks_at_and_keeps_the_one_it_has(make_world, look: str):
    """A machine with no state file whose first command is a look at the notebook (status, sources, reconcile)
    needs no --notebook afterwards; a vault that has a notebook keeps it when the user looks at another one."""
    world = make_world()
    laptop, desk = world.device("laptop"), world.device("desk")
    laptop.write("a.md", "# A\n\nAlpha.\n")
    async with laptop.run(notebook=world.notebook_id) as orch:
        await orch.refresh(["a.md"])
    desk.sync_from(laptop, state=False)

    async def looked(orch) -> str:
        if look == "status":
            return (await orch.status()).notebook_id
        if look == "reconcile":
            return (await orch.reconcile()).notebook_id
        return (await orch.listing(level=True))[0]

    async with desk.run(notebook=world.notebook_id) as orch:
        await looked(orch)
    async with desk.run() as orch:  # no --notebook: the one looked at, with what it holds adopted
        report = await orch.refresh(["a.md"])
    assert report.notebook_id == world.notebook_id and [n.branch for n in report.notes] == [Branch.REUSED]
    other = world.fake.apply("notebook_create", {"title": "Other"})["notebook_id"]
    async with desk.run(notebook=other) as orch:
        assert await looked(orch) == other
    async with desk.run() as orch:
        assert (await orch.status()).notebook_id == world.notebook_id


async def test_a_notebook_that_does_not_exist_is_not_remembered(make_world):
    from nlmsync.errors import NotebookNotFoundError

    world = make_world()
    laptop = world.device("laptop")
    laptop.write("a.md", "alpha")
    async with laptop.run(notebook=world.notebook_id) as orch:
        await orch.refresh(["a.md"])
    with pytest.raises(NotebookNotFoundError):
        async with laptop.run(notebook="no-such-notebook") as orch:
            await orch.refresh(["a.md"])
    async with laptop.run() as orch:
        assert (await orch.status()).notebook_id == world.notebook_id


async def test_a_capacity_given_once_holds_for_the_notebook_until_another_is_given(make_world):
    world = make_world(capacity=200)
    laptop = world.device("laptop")
    for i in range(80):
        laptop.write(f"n{i:02}.md", f"# Note {i}\n\nAbout topic {i}.\n")
    async with laptop.run(notebook=world.notebook_id, capacity=100, pack="never") as orch:
        first = await orch.refresh(all_notes=True)
    assert len(first.by_branch(Branch.ADDED)) == 80 and (first.capacity, first.capacity_source) == (100, "setting")
    laptop.write("new.md", "# New\n\nA note about zebras.\n")
    async with laptop.run() as orch:  # no --capacity: the notebook still holds up to 100, nothing is evicted
        answer = await orch.ask("zebras")
        status = await orch.status()
    assert [o.branch for o in answer.notes] == [Branch.ADDED]
    assert len(world.remote()) == 81
    assert (status.capacity, status.capacity_source) == (100, "remembered")
    async with laptop.run(capacity=90) as orch:  # another capacity: the user's word, remembered from now on
        assert (await orch.status()).capacity == 90
        await orch.refresh(["new.md"])
    async with laptop.run() as orch:
        status = await orch.status()
    assert (status.capacity, status.capacity_source) == (90, "remembered")


async def test_a_capacity_learned_from_a_full_server_is_kept_and_said(make_world):
    world = make_world(capacity=3)
    laptop = world.device("laptop")
    for name in ("a", "b", "c", "d"):
        laptop.write(f"{name}.md", f"# {name}\n\nNote {name}.\n")
    async with laptop.run(notebook=world.notebook_id, capacity=60) as orch:
        await orch.refresh(["a.md", "b.md", "c.md"])
    from nlmsync.errors import CapacityError

    with pytest.raises(CapacityError):
        async with laptop.run() as orch:
            await orch.refresh(["d.md"])
    async with laptop.run() as orch:
        status = await orch.status()
        report = await orch.refresh(["d.md"])  # kept to 3: one of the others is evicted instead
    assert (status.capacity, status.capacity_source) == (3, "learned")
    assert [n.branch for n in report.notes] == [Branch.EVICTED, Branch.ADDED]
