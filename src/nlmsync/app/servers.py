"""The NotebookLM server a run talks to: `connect_server` is the client's `connect` with this app's wiring.

`--server fake` is served by the bundled fake (`nlmsync.fake.serve_in_process`): the app puts the two together
so that the client package never imports the fake, and imports it only when a fake is served. The fake keeps its notebooks out of the vault
(`fake_state_dir`): a tool that syncs the vault's folder to other devices would carry them along, tens of
megabytes for a vault of thousands of notes.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

from mcp.server.mcpserver import MCPServer

from nlmsync.config import Settings
from nlmsync.notebooklm import FAKE_STATE_FILE, NotebookLMClient, connect

__all__ = ["connect_server", "fake_state_dir"]


def fake_state_dir(vault: Path, env: Mapping[str, str] | None = None) -> Path:
    """Where `--server fake` and `fake-stdio` keep the notebooks of `vault` (unless `--server "fake --state FILE"`
    names a file): in the user's state directory (`$XDG_STATE_HOME`, else `~/.local/state`), under
    `nlmsync/fake/`, a folder per vault named by the vault's folder and a hash of its full path."""
    env = os.environ if env is None else env
    root = Path(env["XDG_STATE_HOME"]) if env.get("XDG_STATE_HOME") else Path.home() / ".local" / "state"
    where = Path(vault).resolve()
    key = hashlib.sha256(os.fsencode(where)).hexdigest()[:12]
    return root / "nlmsync" / "fake" / f"{where.name or 'root'}-{key}"


def _serve_fake(switches: Sequence[str], state_path: Path | None) -> tuple[MCPServer, Callable[[], None]]:
    """The client's `InProcessFake`: the bundled fake for `--server "fake SWITCH…"` (`fake.serve_in_process`)."""
    from nlmsync.fake import serve_in_process  # only then: a run on a real server imports none of the fake

    return serve_in_process(switches, state_path)


def _moved_from_the_vault(settings: Settings, folder: Path) -> None:
    """The notebooks an older nlmsync's fake kept beside the state file, moved to `folder` once (the state file
    records their ids: left behind, they would look lost)."""
    old = settings.state_path.parent / FAKE_STATE_FILE
    new = folder / FAKE_STATE_FILE
    if not old.is_file() or new.exists():
        return
    # imported only then: a run on a real server imports no module of the fake
    from nlmsync.fake.persistence import journal_path

    folder.mkdir(parents=True, exist_ok=True)
    if journal_path(old).exists():
        os.replace(journal_path(old), journal_path(new))
    os.replace(old, new)


@asynccontextmanager
async def connect_server(settings: Settings, server: str | MCPServer | None = None) -> AsyncIterator[NotebookLMClient]:
    """A client for `server` (default `settings.server`: a spec, or an in-process server in tests).

    Raises:
        UsageError: the spec cannot be understood.
    """
    folder = fake_state_dir(settings.vault)
    _moved_from_the_vault(settings, folder)
    async with connect(settings.server if server is None else server, settings, state_dir=folder,
                       in_process_fake=_serve_fake) as client:
        yield client
