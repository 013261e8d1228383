"""Which notebook a run works on, and the error for one the server does not know.

`--notebook ID` is that notebook; `--notebook new:TITLE` is created on the first run that writes and found
again by its title on later runs; with neither, the notebook the state file used last: a run that writes makes
the notebook it worked on, given by id or by title, the one later runs use (`Orchestrator`).

A `new:TITLE` the state file does not know (a create whose answer or whose run was lost, a state file restored
from a backup or moved aside) is first looked for on the server under that exact title, and adopted rather
than created a second time. When several notebooks have the title, the one holding the most sources titled
as nlmsync titles its uploads is taken, and the run says which one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from nlmsync.errors import (
    ConnectionProblem,
    NoNotebookError,
    NotebookLMError,
    NotebookNotFoundError,
    NotFoundError,
    UsageError,
)
from nlmsync.notebooklm import NotebookDetails, NotebookLMClient
from nlmsync.store import StateStore
from nlmsync.sync import parse_title

NEW_NOTEBOOK_PREFIX = "new:"
NOTEBOOKS_IN_HINT = 5
NOTEBOOKS_SEARCHED = 1000
"""How many of the server's notebooks a `new:TITLE` unknown to the state file is looked for among."""


async def resolve_notebook(client: NotebookLMClient, store: StateStore, spec: str, *, vault: Path, create: bool,
                           planned: bool = False,
                           notice: Callable[[str], None] | None = None) -> tuple[str, NotebookDetails | None]:
    """The notebook `spec` (`--notebook`, stripped) names, and its `notebook_get` answer when reading it was
    needed to find it; with no spec, the one the state file of `vault` used last.

    `create`: a `new:TITLE` notebook unknown to the state file is adopted from the server or created, and
    recorded (it becomes the default). `planned` (a dry run): a `new:TITLE` notebook the server does not have
    yet is returned as that spec itself. `notice` hears which notebook of the server's was adopted.

    Raises:
        UsageError: no title after `new:`; `new:TITLE` not created yet and not `create`.
        NoNotebookError: no notebook given and no default.
    """
    if spec.startswith(NEW_NOTEBOOK_PREFIX):
        title = spec[len(NEW_NOTEBOOK_PREFIX):].strip()
        if not title:
            raise UsageError("--notebook new:TITLE needs a title")
        return await _new_notebook(client, store, title, create=create, planned=planned, notice=notice)
    if spec:
        return spec, None
    default = store.default_notebook()
    if default is None:
        raise await no_notebook(client, vault)
    return default, None


async def _new_notebook(client: NotebookLMClient, store: StateStore, title: str, *, create: bool, planned: bool,
                        notice: Callable[[str], None] | None) -> tuple[str, NotebookDetails | None]:
    """`new:TITLE`: the notebook this state file knows under `title`, else the server's, else a new one."""
    for known in _recorded_notebooks(store, title):
        try:
            details = await client.notebook_get(known)
        except NotFoundError:
            continue
        if details.notebook.title == title:
            return known, details
    adopted = await _titled_notebook(client, title, notice)
    if adopted is None:
        if planned:
            return NEW_NOTEBOOK_PREFIX + title, None
        if not create:
            raise UsageError(f"notebook '{title}' has not been created yet (run refresh or ask first)")
        adopted = await _create_notebook(client, title, notice), None
    if create:
        with store.step():
            store.record_notebook(adopted[0], title)
            store.set_default_notebook(adopted[0])
    return adopted


def planned_title(notebook_id: str) -> str | None:
    """The title of a `new:TITLE` notebook a dry run only plans (see `resolve_notebook`), else None."""
    if notebook_id.startswith(NEW_NOTEBOOK_PREFIX):
        return notebook_id[len(NEW_NOTEBOOK_PREFIX):].strip()
    return None


def _recorded_notebooks(store: StateStore, title: str) -> list[str]:
    """Notebooks this state file created or used under `title`: the default first, then newest first."""
    default = store.default_notebook()
    known = [nb for nb, known_title in reversed(store.notebooks().items()) if known_title == title]
    return sorted(known, key=lambda nb: nb != default)


async def _titled_notebook(client: NotebookLMClient, title: str,
                          notice: Callable[[str], None] | None) -> tuple[str, NotebookDetails | None] | None:
    """The server's notebook titled exactly `title` (and its `notebook_get` answer when several had to be read to
    choose), or None when it has none. Of several, the one holding the most sources with nlmsync's titles wins
    (the first listed on a tie); `notice` is told which was taken and which were not."""
    matches = [nb for nb in (await client.notebook_list(NOTEBOOKS_SEARCHED)).notebooks if nb.title.strip() == title]
    if not matches:
        return None
    if len(matches) == 1:
        if notice is not None:
            notice(f"using notebook {matches[0].id} titled '{title}', found on the server")
        return matches[0].id, None
    read = [(nb, await client.notebook_get(nb.id)) for nb in matches]
    held = {nb.id: sum(1 for s in details.sources if parse_title(s.title) is not None) for nb, details in read}
    chosen, details = max(read, key=lambda pair: held[pair[0].id])  # max keeps the first of equals
    if notice is not None:
        others = ", ".join(f"{nb.id} ({_held(held[nb.id])})" for nb, _ in read if nb is not chosen)
        notice(f"{len(matches)} notebooks on the server are titled '{title}': using {chosen.id} "
               f"({_held(held[chosen.id])}); not {others}")
    return chosen.id, details


def _held(count: int) -> str:
    return f"{count} source{'' if count == 1 else 's'} titled as nlmsync's uploads"


async def _create_notebook(client: NotebookLMClient, title: str, notice: Callable[[str], None] | None) -> str:
    """`notebook_create`; when its answer is lost, the notebook the server now has under that title (the one
    just created) is adopted instead of creating a second one."""
    try:
        return (await client.notebook_create(title)).notebook_id
    except ConnectionProblem:
        adopted = await _titled_notebook(client, title, notice)
        if adopted is None:
            raise
        return adopted[0]


async def no_notebook(client: NotebookLMClient, vault: Path) -> NoNotebookError:
    """The bad-input error for a run given no notebook whose state file records none: it names the vault (the
    current folder when no `--vault` named another: a command run outside the vault lands here), with the
    notebooks the server has."""
    shown = str(vault.resolve())
    if vault.resolve() == Path.cwd().resolve():
        shown += " (the current folder; --vault DIR names another)"
    listed = await _server_notebooks(client)
    return NoNotebookError(f"no notebook given, and none was used before with the vault {shown}",
                           hint=f"{listed}; pass one with --notebook ID, or {_CREATE}",
                           client_hint=f"{listed}; the notebook is chosen by the user: 'nlmsync serve --notebook ID' "
                                       "(or --notebook new:TITLE for a new one), or 'notebook' in the vault's "
                                       ".nlmsync/config.toml")


async def notebook_not_found(client: NotebookLMClient, notebook_id: str, *, given: bool) -> NotebookNotFoundError:
    """The bad-input error for a notebook id the server does not know (`given` with --notebook, else the
    state file's default), with the notebooks it does know."""
    where = "" if given else " (the notebook this state file used last)"
    listed = await _server_notebooks(client)
    return NotebookNotFoundError(f"notebook {notebook_id}{where} not found on the NotebookLM server",
                                 hint=f"{listed}; pass one with --notebook ID, or {_CREATE}",
                                 client_hint=f"{listed}; the notebook is chosen by the user when starting "
                                             "'nlmsync serve --notebook ID'")


_CREATE = f"--notebook {NEW_NOTEBOOK_PREFIX}TITLE creates one"


async def _server_notebooks(client: NotebookLMClient) -> str:
    """What the server has to choose from, for a hint: its first notebooks, that it has none, or (when they
    cannot be read) the command that lists them."""
    try:
        listing = (await client.notebook_list(NOTEBOOKS_IN_HINT + 1)).notebooks
    except NotebookLMError:
        return "'nlmsync notebooks' lists the notebooks this server has"
    if not listing:
        return "this server has no notebook yet"
    shown = ", ".join(f"{nb.id} ({nb.title})" for nb in listing[:NOTEBOOKS_IN_HINT])
    more = ", …" if len(listing) > NOTEBOOKS_IN_HINT else ""
    return f"this server has: {shown}{more} ('nlmsync notebooks' lists them)"
