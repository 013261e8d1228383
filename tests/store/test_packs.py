"""The packs' tables: which packed notes a run may pass over by their stat alone."""

from __future__ import annotations

from nlmsync.store import NoteHashes, PackRecord, StateStore

NB = "nb-1"


def test_packed_notes_with_stats_are_those_whose_one_part_record_is_the_text_their_pack_holds(store: StateStore) -> None:
    store.record_pack(PackRecord(NB, "p-1", "hash-p", "a.md … d.md (4 notes) · aaaaaaaa", "a.md", "d.md", 4, 400),
                      [("a.md", "ha"), ("b.md", "hb"), ("c.md", "hc"), ("d.md", "hd")])
    store.record_note_hashes([
        NoteHashes("a.md", 10, 100, "W/B", ("ha",)),          # as its pack holds it
        NoteHashes("b.md", 11, 110, "W/B", ("hb-edited",)),   # read again since: not the pack's text
        NoteHashes("c.md", 12, 120, "W2/B", ("hc",)),         # hashed with other split limits
        NoteHashes("d.md", 13, 130, "W/B", ("hd", "hd2")),    # two parts: not one pack member
        NoteHashes("e.md", 14, 140, "W/B", ("he",)),          # in no pack
    ])
    members, stats = store.pack_members_with_stats(NB, "W/B")
    assert members == store.pack_members(NB) and set(members) == {"a.md", "b.md", "c.md", "d.md"}
    assert stats == {"a.md": (10, 100)}
    assert store.pack_members_with_stats("other-notebook", "W/B") == ({}, {})


def _pack(source_id: str, notes: list[str], *, notebook_id: str = NB, proven: bool = True) -> PackRecord:
    return PackRecord(notebook_id, source_id, f"hash-{source_id}", f"{notes[0]} … {notes[-1]} · {source_id}",
                      notes[0], notes[-1], len(notes), 100 * len(notes), proven)


def test_packs_are_listed_in_path_order_with_their_notes_in_the_order_they_hold_them(store: StateStore) -> None:
    assert not store.has_packs(NB) and store.packs(NB) == []
    later, earlier = _pack("p-2", ["m.md", "n.md"]), _pack("p-1", ["b.md", "a.md", "c.md"], proven=False)
    store.record_pack(later, [("m.md", "hm"), ("n.md", "hn")])
    store.record_pack(earlier, [("b.md", "hb"), ("a.md", "ha"), ("c.md", "hc")])
    store.record_pack(_pack("p-9", ["z.md"], notebook_id="nb-other"), [("z.md", "hz")])
    assert store.has_packs(NB) and not store.has_packs("nb-3")
    assert store.packs(NB) == [earlier, later]
    assert store.notes_of_pack(NB, "p-1") == [("b.md", "hb"), ("a.md", "ha"), ("c.md", "hc")]
    assert store.notes_of_pack(NB, "p-9") == []
    assert store.pack_by_source_id(NB, "p-1") == earlier and not earlier.proven
    store.mark_proven(NB, "p-1")
    assert store.pack_by_source_id(NB, "p-1") == _pack("p-1", ["b.md", "a.md", "c.md"], proven=True)
    assert store.pack_by_source_id(NB, "p-2") == later


def test_the_pack_members_of_some_paths_are_those_of_them_that_are_packed(store: StateStore) -> None:
    store.record_pack(_pack("p-1", ["a.md", "b.md"]), [("a.md", "ha"), ("b.md", "hb")])
    store.record_pack(_pack("p-2", ["c.md"]), [("c.md", "hc")])
    store.record_pack(_pack("p-3", ["a.md"], notebook_id="nb-other"), [("a.md", "other")])
    assert store.pack_members(NB) == {"a.md": ("p-1", "ha"), "b.md": ("p-1", "hb"), "c.md": ("p-2", "hc")}
    assert store.pack_members(NB, ["c.md", "a.md", "a.md", "loose.md"]) == {"c.md": ("p-2", "hc"),
                                                                            "a.md": ("p-1", "ha")}
    assert store.pack_members(NB, []) == {}
    store.record_pack(_pack("p-4", ["b.md"]), [("b.md", "hb2")])  # a note leaves the pack that held it
    assert store.pack_members(NB, ["b.md"]) == {"b.md": ("p-4", "hb2")}


def test_sources_found_not_to_be_nlmsyncs_are_remembered_per_notebook_until_forgotten(store: StateStore) -> None:
    assert store.unmanaged_sources(NB) == {}
    store.record_unmanaged(NB, {"s-1": "My notes", "s-2": "a.md · 1234abcd"})
    store.record_unmanaged("nb-other", {"s-3": "Elsewhere"})
    assert store.unmanaged_sources(NB) == {"s-1": "My notes", "s-2": "a.md · 1234abcd"}
    store.forget_unmanaged(NB, ["s-2", "s-3"])
    assert store.unmanaged_sources(NB) == {"s-1": "My notes"}
    assert store.unmanaged_sources("nb-other") == {"s-3": "Elsewhere"}
