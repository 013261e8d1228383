"""What a run's groups of packs do to the old packs they replace (`packs.units.PackGroups`), over a real state
file and the stub client: an old pack adopted by its title alone is read back before it is deleted, and every old
pack the new ones replace is retired but one that holds a new pack already."""

from __future__ import annotations

import pytest
from tests.sync.stub import Bench

from nlmsync.errors import ServerError
from nlmsync.store import PackRecord
from nlmsync.sync.packs.plan import Group, PackedNote, PlannedPack
from nlmsync.sync.packs.text import compose_pack
from nlmsync.sync.packs.units import PackGroups
from nlmsync.sync.report import RefreshReport
from nlmsync.sync.prepared import prepare_note
from nlmsync.sync.titles import pack_title, title_hash

pytestmark = pytest.mark.anyio


def adopted(bench: Bench, first: str, last: str, text: str, held: str) -> PackRecord:
    """A pack adopted by its title alone (not proven): titled for `text`, the notebook's source holding `held`."""
    title = pack_title(first, last, 2, title_hash(text))
    record = PackRecord("nb", bench.client.put(title, held), "h", title, first, last, 2, len(text), proven=False)
    bench.store.record_pack(record, [(first, "h1"), (last, "h2")])
    return record


async def test_an_adopted_pack_is_spared_unless_it_holds_what_its_title_says_and_one_that_does_not_is_not_ours(
        bench, monkeypatch: pytest.MonkeyPatch):
    bench.deps()
    ours = compose_pack([("a.md", "alpha words"), ("b.md", "beta words")])
    other = compose_pack([("c.md", "gamma words"), ("d.md", "delta words")])
    later = compose_pack([("e.md", "epsilon words"), ("f.md", "zeta words")])
    records = [adopted(bench, "a.md", "b.md", ours, ours),
               adopted(bench, "c.md", "d.md", other, "a shopping list: eggs, milk, bread"),
               adopted(bench, "e.md", "f.md", later, later)]
    unreadable, read = records[2].source_id, bench.client.source_get_content

    async def not_indexed_yet(source_id: str):
        if source_id == unreadable:
            raise ServerError("the source is not ready")
        return await read(source_id)

    monkeypatch.setattr(bench.client, "source_get_content", not_indexed_yet)
    run = bench.run()
    groups = PackGroups(run.deps, run.remote, run.registry, [], {}, RefreshReport(notebook_id="nb"))
    spared = await groups.unproven(records)
    assert spared == {records[1].source_id, unreadable}  # ours goes; the stranger and the unread one stay
    foreign = {records[1].source_id: records[1].title}
    assert run.remote.foreign == foreign and bench.store.unmanaged_sources("nb") == foreign  # not read again


def test_a_group_retires_every_old_pack_it_replaces_but_one_that_holds_a_new_pack_already(bench):
    bench.deps()

    def planned(*paths: str) -> PlannedPack:
        notes = [PackedNote(prepare_note(p, f"text of {p}"), 10) for p in paths]
        text = compose_pack([(n.path, n.note.parts[0].text or "") for n in notes])
        title = pack_title(paths[0], paths[-1], len(paths), title_hash(text))
        return PlannedPack(notes=notes, text=text, content_hash="h", title=title, source_id=bench.client.put(title))

    kept, new = planned("a.md", "b.md"), planned("c.md", "d.md")
    assert kept.source_id is not None
    old = [PackRecord("nb", kept.source_id, "h", kept.title, "a.md", "b.md", 2, 20),
           PackRecord("nb", bench.client.put("Pack c.md … d.md"), "h", "Pack c.md … d.md", "c.md", "d.md", 2, 20)]
    for record, pack in zip(old, (kept, new), strict=True):
        bench.store.record_pack(record, pack.members())
    run = bench.run()
    groups = PackGroups(run.deps, run.remote, run.registry, [], {}, RefreshReport(notebook_id="nb"))
    retire = groups.record(Group(packs=[kept, new], old_packs=old))
    assert retire == [old[1].source_id] and [p.source_id for p in bench.store.pending_deletions("nb")] == retire
    assert [p.source_id for p in bench.store.packs("nb")] == [kept.source_id, new.source_id]
