"""What a fresh process answering one search loads: no pydantic, no sqlite-utils (issue 2's time to first
result), and the same answers as with `Settings`."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from nlmsync.config import Settings
from nlmsync.search.index import IndexSettings, NoteIndex
from nlmsync.store.db import open_connection, open_database


def test_index_settings_defaults_are_the_settings_defaults() -> None:
    for item in dataclasses.fields(IndexSettings):
        assert item.name in Settings.model_fields
        ours = item.default_factory() if item.default_factory is not dataclasses.MISSING else item.default
        assert ours == Settings.model_fields[item.name].get_default(call_default_factory=True), item.name


def test_the_search_path_imports_neither_pydantic_nor_sqlite_utils(vault: Path, tmp_path: Path) -> None:
    state = tmp_path / "state.db"
    open_database(state).close()  # an existing, migrated state file: the case of every search but the first
    code = (
        "import sys\nfrom pathlib import Path\n"
        "from nlmsync.search.index import NoteIndex\nfrom nlmsync.store.db import open_connection\n"
        f"hits = NoteIndex(Path({str(vault)!r}), open_connection(Path({str(state)!r}))).search('heapsort')\n"
        "assert hits, 'no hit'\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'sqlite_utils', 'click', 'typer'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_plain_connection_and_default_settings_answer_like_settings_and_sqlite_utils(vault: Path) -> None:
    state = vault / ".nlmsync" / "state.db"
    queries = ["How does heapsort work?", "김치찌개", "sourdough"]
    with_settings = NoteIndex(vault, open_database(state), Settings(vault=vault))
    expected = [[(h.path, h.score) for h in with_settings.search(q)] for q in queries]
    plain = NoteIndex(vault, open_connection(state))
    assert [[(h.path, h.score) for h in plain.search(q)] for q in queries] == expected
    assert plain.notes_read == 0
    assert [h.path for h in plain.selected("heapsort")] == [h.path for h in with_settings.selected("heapsort")]
