"""Levelling at its own seam (`adopt.level_with_notebook`): the sources a notebook holds that the state file does
not know, adopted, deleted or left alone, with a real state file and the stub client in the server's slot."""

from __future__ import annotations

import pytest
from tests.sync.stub import Bench

from nlmsync.store import PackRecord
from nlmsync.sync.adopt import level_with_notebook
from nlmsync.sync.packs.text import compose_pack
from nlmsync.sync.registry import STALE_HASH
from nlmsync.sync.prepared import prepare_note
from nlmsync.sync.titles import pack_title, parse_note_title, title_hash

pytestmark = pytest.mark.anyio

async def level(bench: Bench):
    run = bench.run()
    return await level_with_notebook(run.deps, run.remote), run.remote


async def test_an_upload_of_a_note_whose_pack_is_gone_from_the_notebook_is_adopted_not_deleted(bench):
    """The state file says `a.md` is in a pack, but that pack is no longer listed: another machine's upload of
    `a.md` alone is the note's source now, not a copy of a note that is in a pack."""
    bench.write("a.md", "alpha\n")
    bench.deps()
    bench.store.record_pack(PackRecord("nb", "gone-pack", "h", "a.md (1 note) · 00000000", "a.md", "a.md", 1, 10),
                            [("a.md", "h")])
    title = prepare_note("a.md", "alpha\n").parts[0].title
    upload = bench.client.put(title, "alpha\n")
    done, _ = await level(bench)
    assert done.notes == ["a.md"] and done.retired == []
    assert [m.source_id for m in bench.store.mappings_by_path("nb", "a.md")] == [upload]
    assert bench.store.pending_deletions("nb") == []


async def test_an_upload_of_a_note_in_a_live_pack_is_a_copy_and_goes(bench):
    bench.write("a.md", "alpha\n")
    bench.deps()
    pack = bench.client.put("a.md (1 note) · 00000000", "# a.md\n\nalpha\n")
    bench.store.record_pack(PackRecord("nb", pack, "h", "a.md (1 note) · 00000000", "a.md", "a.md", 1, 10),
                            [("a.md", "h")])
    copy = bench.client.put(prepare_note("a.md", "alpha\n").parts[0].title, "alpha\n")
    done, _ = await level(bench)
    assert done.notes == [] and done.retired == [copy]
    assert [p.source_id for p in bench.store.pending_deletions("nb")] == [copy]


async def test_a_shortened_title_two_notes_could_have_is_adopted_for_neither(bench):
    """A title keeps the end of a path too long for it; when two notes of the vault end that way, the title does
    not say which, and the source is adopted for neither (never for the wrong one)."""
    tail = "/".join(["d" * 200, "e" * 200, "f" * 100 + ".md"])
    first, second = f"x1/{tail}", f"x2/{tail}"
    bench.write(first, "the first note\n")
    bench.write(second, "the second note\n")
    title = prepare_note(second, "the second note\n").parts[0].title
    parsed = parse_note_title(title)
    assert parsed is not None and parsed.shown.startswith("…")  # both paths are shown so
    source = bench.client.put(title, "the second note\n")
    done, remote = await level(bench)
    assert done.notes == [] and done.retired == []
    assert bench.store.mappings_by_path("nb", first) == [] and bench.store.mappings_by_path("nb", second) == []
    assert source in remote and source not in remote.foreign


async def test_a_source_titled_as_a_note_that_holds_other_text_is_a_lookalike_left_alone(bench):
    bench.write("a.md", "alpha\n")
    lookalike = bench.client.put(prepare_note("a.md", "alpha\n").parts[0].title, "someone else's words\n")
    done, remote = await level(bench)
    assert done.lookalikes == {lookalike: remote.sources[lookalike]} and lookalike in remote.foreign
    assert bench.store.mappings_by_path("nb", "a.md") == [] and bench.store.pending_deletions("nb") == []
    assert bench.store.unmanaged_sources("nb") == {lookalike: remote.sources[lookalike]}


async def test_a_notebook_whose_sources_the_state_file_knows_costs_no_call(bench):
    bench.write("a.md", "alpha\n")
    bench.client.put("notes by hand")
    done, _ = await level(bench)
    assert done.notice() is None and bench.client.calls == []


async def test_a_pack_of_notes_this_vault_does_not_have_yet_is_adopted_as_older_and_kept(bench):
    """Another machine packed notes that have not reached this vault yet (a file-sync tool still copying them):
    the pack, proven nlmsync's by its text, is recorded as an older one and kept, not deleted as a copy."""
    bench.write("a.md", "alpha\n")
    text = compose_pack([("new/x.md", "words of x"), ("new/y.md", "words of y")])
    pack = bench.client.put(pack_title("new/x.md", "new/y.md", 2, title_hash(text)), text)
    done, _ = await level(bench)
    assert done.packs == [pack] and done.retired == [] and bench.store.pending_deletions("nb") == []
    record = bench.store.pack_by_source_id("nb", pack)
    assert record is not None and record.content_hash == STALE_HASH  # older: `refresh --all` replaces it


async def test_a_recorded_pack_whose_notes_an_upload_holds_exactly_is_replaced_by_it(bench):
    """Another machine replaced a pack this state file records (its notes changed since): the upload holding the
    vault's notes exactly is adopted, and the recorded pack, holding older versions of the same notes, goes."""
    texts = {"a.md": "alpha now\n", "b.md": "beta now\n"}
    for path, text in texts.items():
        bench.write(path, text)
    bench.deps()
    recorded = pack_title("a.md", "b.md", 2, "0badc0de")
    old = bench.client.put(recorded, "# a.md\n\nalpha\n\n# b.md\n\nbeta\n")
    bench.store.record_pack(PackRecord("nb", old, "h", recorded, "a.md", "b.md", 2, 30),
                            [("a.md", "h-a"), ("b.md", "h-b")])
    text = compose_pack([(p, prepare_note(p, t).parts[0].text or "") for p, t in texts.items()])
    new = bench.client.put(pack_title("a.md", "b.md", 2, title_hash(text)), text)
    done, _ = await level(bench)
    assert done.packs == [new] and done.retired == [old]
    assert [p.source_id for p in bench.store.pending_deletions("nb")] == [old]
    assert [p.source_id for p in bench.store.packs("nb")] == [new]
