"""The package exports exactly the documented names, each the thing itself (not a submodule of the same name)."""

from __future__ import annotations

import types

from nlmsync import search


def test_exported_names_are_exactly_the_documented_ones() -> None:
    assert sorted(search.__all__) == [
        "IndexReport", "NoteIndex", "SearchHit", "Selection", "markdown_lines", "matched_words", "names_nothing", "query_terms",
        "tokenize",
    ]
    for name in search.__all__:
        value = getattr(search, name)
        assert not isinstance(value, types.ModuleType), name
        assert value.__module__.startswith("nlmsync.search"), name


def test_tokenize_is_the_function_after_its_module_was_imported() -> None:
    import nlmsync.search.tokenize  # noqa: F401 - the submodule import that would rebind the package attribute

    assert search.tokenize("Heap sort") == ["heap", "sort", "heapsort"]
