"""A renamed note's sources retitled to its new path at their own seam (`notes.units.NotesAlone`), part by part:
each part keeps its hash and takes its new path and number; a refused rename changes nothing of that part and
stops no other; a source another machine already retitled is only recorded."""

from __future__ import annotations

import pytest
from tests.sync.stub import Bench

from nlmsync.errors import ServerError
from nlmsync.store import SourceMapping
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.notes.decide import PlannedNote
from nlmsync.sync.notes.units import NotesAlone
from nlmsync.sync.prepared import prepare_note

pytestmark = pytest.mark.anyio

SPLIT = "".join(f"Paragraph {i} holds words enough to need a part of its own here.\n\n" for i in range(4))


async def test_a_renamed_split_note_is_retitled_part_by_part_past_a_refused_rename(bench: Bench,
                                                                                    monkeypatch: pytest.MonkeyPatch):
    old = prepare_note("a.md", SPLIT, max_words=15).parts
    new = prepare_note("new/a.md", SPLIT, max_words=15)
    assert len(old) == len(new.parts) == 4
    ids = [bench.client.put(part.title, part.text or "") for part in old]
    bench.deps()
    bench.store.register_source_alias("replaced-2", ids[2])  # part 2's row holds the id its source replaced
    done = {0: new.parts[0].title}  # part 0 retitled by an earlier run
    bench.store.add_new_mappings([SourceMapping(
        notebook_id="nb", path="new/a.md", part=p.index, part_count=4, content_hash=p.content_hash,
        title=done.get(p.index, old[p.index].title), source_id="replaced-2" if p.index == 2 else ids[p.index])
        for p in new.parts])
    bench.client.sources[ids[0]].title = new.parts[0].title
    bench.client.sources[ids[3]].title = new.parts[3].title  # another machine retitled part 3 already
    renamed: list[str] = []
    rename = bench.client.source_rename

    async def refusing(notebook_id: str, source_id: str, new_title: str) -> object:
        renamed.append(source_id)
        if source_id == ids[1]:
            raise ServerError("Internal error")
        return await rename(notebook_id, source_id, new_title)

    monkeypatch.setattr(bench.client, "source_rename", refusing)
    run = bench.run()
    work = PlannedNote(new, Decision(Branch.RENAMED, keep=tuple(ids), rename_from="a.md"), tuple(p.title for p in old))
    await NotesAlone(run.deps, run.remote).retitle_best_effort(work)
    assert renamed == [ids[1], ids[2]]  # parts 0 and 3 were titled so already: no call
    titles = [new.parts[0].title, old[1].title, new.parts[2].title, new.parts[3].title]
    assert bench.client.titles() == titles and [run.remote.sources[i] for i in ids] == titles
    assert [(r.part, r.source_id, r.title) for r in bench.store.mappings_by_path("nb", "new/a.md")] == [
        (i, ids[i], titles[i]) for i in range(4)]  # the refused part keeps its old title: a later run tries again
