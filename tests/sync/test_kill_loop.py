"""kill -9 of a real `nlmsync refresh --all` process, again and again, over a few hundred notes.

The reused notes' bookkeeping is one step per run and the state file syncs at checkpoints, not at every
commit (WAL, synchronous=NORMAL): convergence rests on deterministic titles and adoption. Each run is killed
once the fake's journal shows the call it waits for — the first run right after it created the notebook, before
it could record it, the later ones after more uploads; the run after the last kill must finish the job, and the
one after it change nothing — one notebook, every note live once under its title, no duplicate, no orphan, the
registry agreeing with the notebook.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.cli_helpers import fake_state

from nlmsync.config import Settings
from nlmsync.fake import FakeNotebookLM
from nlmsync.fake.persistence import journal_path
from nlmsync.store import StateStore
from nlmsync.sync.titles import source_title, title_hash

NOTES = 300
KILL_AFTER = (("notebook_create", 1), ("source_add", 25), ("source_add", 80), ("source_add", 150),
              ("source_add", 220))
DEADLINE_SECONDS = 180.0


def _calls(journal: Path, tool: str) -> int:
    try:
        return journal.read_text(encoding="utf-8").count(f'"tool": "{tool}", "arguments"')
    except FileNotFoundError:
        return 0


def _run_killed(command: list[str], journal: Path, points: tuple[tuple[str, int], ...],
                env: dict[str, str] | None = None) -> int:
    """Run `command` once per point, each killed once the fake's journal shows that many calls of the tool;
    returns how many were killed (a run that finished first was not)."""
    kills = 0
    for tool, target in points:
        proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + DEADLINE_SECONDS
        while proc.poll() is None and _calls(journal, tool) < target and time.monotonic() < deadline:
            time.sleep(0.01)  # polling for the condition, not waiting a fixed time
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.communicate()
    return kills


@pytest.mark.slow
def test_kill_9_again_and_again_during_refresh_all_converges(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    texts = {}
    for i in range(NOTES):
        rel = f"notes/{i // 50}/n{i:03}.md"
        texts[rel] = f"# Note {i}\n\nBody of note {i}, about topic {i % 13}.\n"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(texts[rel], encoding="utf-8")
    command = [sys.executable, "-m", "nlmsync", "--vault", str(vault), "--server", f"fake --capacity {NOTES + 50}",
               "--notebook", "new:Kill", "refresh", "--all", "--capacity", str(NOTES + 50), "--json"]
    state = fake_state(vault)
    journal = journal_path(state)
    kills = _run_killed(command, journal, KILL_AFTER)
    assert kills >= 2, "the runs finished before they could be killed: raise NOTES"

    finished = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, check=False)
    assert finished.returncode == 0, finished.stderr
    before_idle = len(FakeNotebookLM(state_path=state).calls)
    idle = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, check=False)
    assert idle.returncode == 0, idle.stderr
    assert '"reused"' in idle.stdout and '"added"' not in idle.stdout and '"replaced"' not in idle.stdout

    fake = FakeNotebookLM(state_path=state)
    assert len(fake.notebooks) == 1
    (notebook,) = fake.notebooks.values()
    titles = sorted(s.title for s in notebook.sources.values())
    assert titles == sorted(source_title(rel, title_hash(text)) for rel, text in texts.items())
    idle_calls = [c.tool for c in fake.calls[before_idle:]]
    assert idle_calls.count("notebook_get") == 1
    assert not {"source_add", "source_delete", "source_rename", "notebook_create"} & set(idle_calls)
    with StateStore.open(vault / ".nlmsync" / "state.db", Settings(vault=vault)) as store:
        rows = store.all_mappings(notebook.id)
        assert sorted(r.path for r in rows) == sorted(texts)
        assert {store.resolve_source_id(r.source_id) for r in rows} == set(notebook.sources)
        assert store.pending_deletions(notebook.id) == []


PACKED_NOTES = 3_000
PACKED_ENV = {"NLMSYNC_SOURCE_MAX_BYTES": "6000", "NLMSYNC_CAPACITY": "50"}


@pytest.mark.slow
def test_kill_9_again_and_again_during_a_packed_refresh_all_converges(tmp_path: Path) -> None:
    """A vault of a few thousand notes packed into a notebook of 50, killed while it is created and filled, then
    while a second mirror replaces, splits and retires packs: every note ends in exactly one pack with its
    current text, one notebook, no orphan, the registry agreeing, and an idle run after it changes nothing."""
    import os

    from nlmsync.sync.packs.text import compose_pack

    vault = tmp_path / "vault"
    texts: dict[str, str] = {}

    def write(rel: str, text: str) -> None:
        texts[rel] = text
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")

    for i in range(PACKED_NOTES):
        write(f"notes/{i // 100:02}/n{i:04}.md", f"# Note {i}\n\nBody of note {i}, about topic {i % 17}.\n")
    env = {**os.environ, **PACKED_ENV}
    command = [sys.executable, "-m", "nlmsync", "--vault", str(vault), "--server", "fake --capacity 50",
               "--notebook", "new:Packed", "refresh", "--all", "--json"]
    state = fake_state(vault)
    journal = journal_path(state)
    kills = _run_killed(command, journal, (("notebook_create", 1), ("source_add", 4), ("source_add", 12),
                                           ("source_add", 25)), env)
    assert kills >= 3, "the runs finished before they could be killed"
    first = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, env=env, check=False)
    assert first.returncode == 0, first.stderr

    for i in range(0, PACKED_NOTES, 13):  # edits across every pack, deletions, new notes, one pack grown past the limit
        write(f"notes/{i // 100:02}/n{i:04}.md", f"# Note {i}\n\nEdited body of note {i}.\n")
    for i in range(5, PACKED_NOTES, 97):
        rel = f"notes/{i // 100:02}/n{i:04}.md"
        (vault / rel).unlink()
        del texts[rel]
    for i in range(0, PACKED_NOTES, 61):
        write(f"notes/{i // 100:02}/n{i:04}b.md", f"# New {i}\n\nA note added after the mirror.\n")
    write("notes/10/n1001.md", "# Grown\n\n" + "A long line of words. " * 150)
    adds, deletes = _calls(journal, "source_add"), _calls(journal, "source_delete")
    kills = _run_killed(command, journal, (("source_add", adds + 3), ("source_delete", deletes + 2),
                                           ("source_add", adds + 20), ("source_delete", deletes + 15)), env)
    assert kills >= 2, "the runs finished before they could be killed"
    finished = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, env=env, check=False)
    assert finished.returncode == 0, finished.stderr
    before_idle = len(FakeNotebookLM(state_path=state).calls)
    idle = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, env=env, check=False)
    assert idle.returncode == 0, idle.stderr

    fake = FakeNotebookLM(state_path=state)
    assert len(fake.notebooks) == 1
    (notebook,) = fake.notebooks.values()
    idle_calls = [c.tool for c in fake.calls[before_idle:]]
    assert idle_calls.count("notebook_get") == 1
    assert not {"source_add", "source_delete", "source_rename", "notebook_create"} & set(idle_calls)
    assert len(notebook.sources) <= 50 - 3
    with StateStore.open(vault / ".nlmsync" / "state.db", Settings(vault=vault)) as store:
        packs = store.packs(notebook.id)
        assert {p.source_id for p in packs} == set(notebook.sources)
        assert store.all_mappings(notebook.id) == [] and store.pending_deletions(notebook.id) == []
        held: list[str] = []
        for pack in packs:
            notes = [p for p, _ in store.notes_of_pack(notebook.id, pack.source_id)]
            held.extend(notes)
            source = notebook.sources[pack.source_id]
            assert source.title == pack.title
            assert source.text == compose_pack([(p, texts[p]) for p in notes])
    assert sorted(held) == sorted(texts)


@pytest.mark.slow
@pytest.mark.parametrize("titles_ignored", [False, True], ids=["titles-applied", "file-titles-ignored"])
def test_kill_9_again_and_again_during_a_refresh_with_attachments_converges(tmp_path: Path,
                                                                             titles_ignored: bool) -> None:
    """Notes, PDFs and images (opted in) uploaded by a real process killed while it uploads, with the server
    applying file titles and with its rename of them not taking: every file ends live once under its title, no
    duplicate, the registry agreeing, and an idle run after it changes nothing."""
    import os

    from tests.documents.pdfs import pdf, text_page

    from nlmsync.documents import hash_file

    vault = tmp_path / "vault"
    titles = set()
    for i in range(20):
        rel = f"notes/n{i:02}.md"
        text = f"# Note {i}\n\nBody of note {i}.\n"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
        titles.add(source_title(rel, title_hash(text)))
    for i in range(16):
        rel = f"papers/p{i:02}.pdf" if i < 14 else f"shots/s{i:02}.png"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(pdf(text_page(f"Paper {i} on topic {i % 5}")) if rel.endswith(".pdf")
                                  else b"\x89PNG\r\n\x1a\n" + bytes([i]) * 64)
        titles.add(source_title(rel, hash_file(vault / rel)[0]))
    server = "fake --capacity 100" + (" --file-titles-ignored" if titles_ignored else "")
    command = [sys.executable, "-m", "nlmsync", "--vault", str(vault), "--server", server,
               "--notebook", "new:Files", "refresh", "--all", "--capacity", "100", "--json"]
    env = {**os.environ, "NLMSYNC_ATTACHMENTS": "documents,images"}
    journal = journal_path(fake_state(vault))
    kills = _run_killed(command, journal, (("source_add", 22), ("source_add", 26), ("source_add", 31)), env)
    assert kills >= 2, "the runs finished before they could be killed"
    finished = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, env=env, check=False)
    assert finished.returncode == 0, finished.stderr
    before_idle = len(FakeNotebookLM(state_path=fake_state(vault)).calls)
    idle = subprocess.run(command, capture_output=True, text=True, timeout=DEADLINE_SECONDS, env=env, check=False)
    assert idle.returncode == 0, idle.stderr

    fake = FakeNotebookLM(state_path=fake_state(vault))
    (notebook,) = fake.notebooks.values()
    listed = sorted(s.title for s in notebook.sources.values())
    assert listed == sorted(titles), (set(listed) - titles, titles - set(listed), finished.stdout[-3000:])
    idle_calls = [c.tool for c in fake.calls[before_idle:]]
    assert not {"source_add", "source_delete", "source_rename", "notebook_create"} & set(idle_calls)
    with StateStore.open(vault / ".nlmsync" / "state.db", Settings(vault=vault)) as store:
        rows = store.all_mappings(notebook.id)
        assert {store.resolve_source_id(r.source_id) for r in rows} == set(notebook.sources)
        assert store.pending_deletions(notebook.id) == []
    assert not any((vault / ".nlmsync" / "uploads").iterdir())
