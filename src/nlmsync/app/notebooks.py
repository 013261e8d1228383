"""Which notebook a run works on, and the error for one the server does not know.

`--notebook ID` is that notebook; `--notebook new:TITLE` is created on the first run that writes and found
again by its title on later runs (a create whose answer was lost is adopted, not repeated); with neither,
the notebook the state file used last.
"""

from __future__ import annotations

from nlmsync.errors import (
    ConnectionProblem,
    NotebookLMError,
    NotebookNotFoundError,
    NotFoundError,
    UsageError,
)
from nlmsync.notebooklm import NotebookDetails, NotebookLMClient
from nlmsync.store import StateStore

NEW_NOTEBOOK_PREFIX = "new:"
NOTEBOOKS_IN_HINT = 5


async def resolve_notebook(client: NotebookLMClient, store: StateStore, spec: str, *, create: bool,
                           planned: bool = False) -> tuple[str, NotebookDetails | None]:
    """The notebook `spec` (`--notebook`, stripped) names, and its `notebook_get` answer when reading it was
    needed to find it.

    `create`: a `new:TITLE` notebook not created yet is created (and becomes the default).
    `planned` (a dry run): a `new:TITLE` notebook not created yet is returned as that spec itself.

    Raises:
        UsageError: no title after `new:`; `new:TITLE` not created yet and not `create`; no notebook given
            and no default.
    """
    if spec.startswith(NEW_NOTEBOOK_PREFIX):
        title = spec[len(NEW_NOTEBOOK_PREFIX):].strip()
        if not title:
            raise UsageError("--notebook new:TITLE needs a title")
        for known in _recorded_notebooks(store, title):
            try:
                details = await client.notebook_get(known)
            except NotFoundError:
                continue
            if details.notebook.title == title:
                if create and known != store.default_notebook():
                    store.set_default_notebook(known)
                return known, details
        if planned:
            return spec, None
        if not create:
            raise UsageError(f"notebook '{title}' has not been created yet (run refresh or ask first)")
        notebook_id = await _create_notebook(client, store, title)
        with store.step():
            store.record_notebook(notebook_id, title)
            store.set_default_notebook(notebook_id)
        return notebook_id, None
    if spec:
        return spec, None
    default = store.default_notebook()
    if default is None:
        raise UsageError("no notebook given: pass --notebook ID, or --notebook new:TITLE to create one",
                         hint="or set 'notebook' in .nlmsync/config.toml")
    return default, None


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


async def _create_notebook(client: NotebookLMClient, store: StateStore, title: str) -> str:
    """`notebook_create`; when its answer is lost, a notebook with that title unknown to the state file
    (the one just created) is adopted instead of creating a second one on the next run."""
    try:
        return (await client.notebook_create(title)).notebook_id
    except ConnectionProblem:
        known = store.notebooks()
        listing = await client.notebook_list()
        for nb in listing.notebooks:
            if nb.title == title and nb.id not in known:
                return nb.id
        raise


async def notebook_not_found(client: NotebookLMClient, notebook_id: str, *, given: bool) -> NotebookNotFoundError:
    """The bad-input error for a notebook id the server does not know (`given` with --notebook, else the
    state file's default), with the notebooks it does know."""
    where = "" if given else " (the notebook this state file used last)"
    create = f"--notebook {NEW_NOTEBOOK_PREFIX}TITLE creates one"
    try:
        listing = (await client.notebook_list(NOTEBOOKS_IN_HINT + 1)).notebooks
    except NotebookLMError:
        hint = f"'nlmsync notebooks' lists the notebooks this server has; {create}"
    else:
        if listing:
            shown = ", ".join(f"{nb.id} ({nb.title})" for nb in listing[:NOTEBOOKS_IN_HINT])
            more = ", …" if len(listing) > NOTEBOOKS_IN_HINT else ""
            hint = (f"this server has: {shown}{more} ('nlmsync notebooks' lists them); pass one with --notebook ID, "
                    f"or {create}")
        else:
            hint = f"this server has no notebook yet; {create}"
    return NotebookNotFoundError(f"notebook {notebook_id}{where} not found on the NotebookLM server", hint=hint)
