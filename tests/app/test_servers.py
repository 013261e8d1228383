"""Where the fake NotebookLM server keeps a vault's notebooks (`fake_state_dir`)."""

from __future__ import annotations

from pathlib import Path

from nlmsync.app.servers import fake_state_dir


def test_the_fakes_notebooks_of_a_vault_are_kept_under_the_users_state_folder(tmp_path: Path) -> None:
    env = {"XDG_STATE_HOME": str(tmp_path / "state")}
    mine = fake_state_dir(tmp_path / "notes", env)
    assert mine.parent == tmp_path / "state" / "nlmsync" / "fake" and mine.name.startswith("notes-")
    assert fake_state_dir(tmp_path / "other" / "notes", env) != mine  # by the vault's full path
    assert fake_state_dir(Path("/"), env).name.startswith("root-")  # the root folder has no name of its own
