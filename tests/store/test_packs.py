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
