"""The index's keys for notes' facts: one signed 64-bit integer per path, whatever the path holds."""

from __future__ import annotations

from nlmsync.store.index_codec import path_key, path_keys


def test_every_path_has_a_key_that_fits_sqlites_integer_even_one_named_in_bytes_that_are_not_utf8() -> None:
    paths = ["café.md", "caf\udce9.md", "notes/a.md", "notes/b.md"]  # \udce9: the byte 0xE9 of a Latin-1 name
    keys = path_keys(paths)
    assert len(set(keys)) == len(paths) and all(-(1 << 63) <= key < 1 << 63 for key in keys)
    assert [path_key(p) for p in paths] == keys


def test_the_terms_with_a_prefix_are_found_across_the_blocks_they_span() -> None:
    from nlmsync.store.index_codec import terms_with_prefix

    blocks = [["apple", "heap"], ["heapify", "heaps"], ["heapsort", "zebra"]]
    heads = [block[0] for block in blocks]
    assert terms_with_prefix(heads, blocks.__getitem__, "heap", 10) == ["heap", "heapify", "heaps", "heapsort"]
    assert terms_with_prefix(heads, blocks.__getitem__, "heaps", 10) == ["heaps", "heapsort"]
    assert terms_with_prefix(heads, blocks.__getitem__, "heap", 2) == ["heap", "heapify"]
    assert terms_with_prefix(heads, blocks.__getitem__, "b", 10) == []
