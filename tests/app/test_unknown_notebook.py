"""A notebook id the server does not know is bad input (`NotebookNotFoundError`, exit 2) for every run that
reads the notebook, whether it came from --notebook or from the state file; the hint lists the server's notebooks."""

from __future__ import annotations

import pytest

from nlmsync.app.notebooks import no_notebook
from nlmsync.errors import NoNotebookError, NotebookNotFoundError

pytestmark = pytest.mark.anyio

RUNS = {
    "refresh": lambda orch: orch.refresh(),
    "refresh --all --dry-run": lambda orch: orch.refresh(all_notes=True, dry_run=True),
    "ask": lambda orch: orch.ask("heapsort"),
    "status": lambda orch: orch.status(),
    "reconcile": lambda orch: orch.reconcile(),
}


@pytest.mark.parametrize("run", RUNS.values(), ids=RUNS.keys())
async def test_unknown_notebook_is_bad_input_with_the_servers_notebooks_in_the_hint(make_world, run):
    world = make_world(notebook="nb-gone")
    world.write("a.md", "# Heapsort\n\nsift down\n")
    calls = len(world.fake.calls)
    async with world.run() as orch:
        with pytest.raises(NotebookNotFoundError) as caught:
            await run(orch)
    assert caught.value.exit_code == 2
    assert str(caught.value) == "notebook nb-gone not found on the NotebookLM server"
    assert caught.value.hint == (f"this server has: {world.notebook_id} (Test) ('nlmsync notebooks' lists them); "
                                 "pass one with --notebook ID, "
                                 "or --notebook new:TITLE creates one")
    assert world.mutating_calls(calls) == []


async def test_a_vanished_default_notebook_says_it_came_from_the_state_file(make_world):
    world = make_world(notebook="new:Mine")
    world.write("a.md", "alpha")
    async with world.run() as orch:
        mine = (await orch.refresh(["a.md"])).notebook_id
    world.fake.apply("notebook_delete", {"notebook_id": mine, "confirm": True})
    async with world.run(notebook=None) as orch:
        with pytest.raises(NotebookNotFoundError) as caught:
            await orch.status()
    assert str(caught.value) == (f"notebook {mine} (the notebook this state file used last) not found "
                                 "on the NotebookLM server")
    assert caught.value.hint == (f"this server has: {world.notebook_id} (Test) ('nlmsync notebooks' lists them); "
                                 "pass one with --notebook ID, "
                                 "or --notebook new:TITLE creates one")


@pytest.mark.parametrize("from_vault", [True, False], ids=["run-in-the-vault", "run-elsewhere"])
async def test_no_notebook_names_the_vault_and_the_servers_notebooks(make_world, monkeypatch, tmp_path, from_vault):
    """A run given no notebook, whose state file knows none: the error names the vault (and, when it is the
    current folder, that --vault names another: a command run outside the vault lands here), and the hints, the
    command line's and an MCP client's, list what the server has."""
    world = make_world()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(world.root if from_vault else elsewhere)
    async with world.run() as orch:
        error = await no_notebook(orch.client, world.root)
    assert isinstance(error, NoNotebookError) and error.exit_code == 2
    current = " (the current folder; --vault DIR names another)" if from_vault else ""
    assert str(error) == f"no notebook given, and none was used before with the vault {world.root.resolve()}{current}"
    listed = f"this server has: {world.notebook_id} (Test) ('nlmsync notebooks' lists them)"
    assert error.hint == f"{listed}; pass one with --notebook ID, or --notebook new:TITLE creates one"
    assert error.client_hint == (f"{listed}; the notebook is chosen by the user: 'nlmsync serve --notebook ID' (or "
                                 "--notebook new:TITLE for a new one), or 'notebook' in the vault's .nlmsync/config.toml")
