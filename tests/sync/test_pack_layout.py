"""Which notes share a pack (`pack_layout.plan_layout`): within the limit and the budget, every note once, in
path order, and put as the vault changes — kept ranges, content-defined boundaries."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlmsync.sync.packs.layout import NotesDoNotFit, PackNote, plan_layout

LIMIT = 10_000


def _vault(count: int, seed: int = 7, folders: int = 9) -> list[PackNote]:
    rng = random.Random(seed)
    names = sorted({f"f{rng.randrange(folders)}/note-{rng.randrange(10**6):06}.md" for _ in range(count)})
    return [PackNote(n, rng.randint(50, 1_500)) for n in names]


def _packs(notes: list[PackNote], starts: list[str] | None = None, *, budget: int = 1_000,
           target: int = 4_000) -> list[tuple[str, ...]]:
    layout = plan_layout(notes, starts or [], max_bytes=LIMIT, budget=budget, target_bytes=target)
    return [tuple(n.path for n in notes[a:b]) for a, b in layout]


def _starts(packs: list[tuple[str, ...]]) -> list[str]:
    return [p[0] for p in packs]


def _size(notes: list[PackNote], pack: tuple[str, ...]) -> int:
    sizes = {n.path: n.size for n in notes}
    return sum(sizes[p] for p in pack)


def test_a_layout_holds_every_note_once_in_path_order_within_the_limit() -> None:
    notes = _vault(600)
    packs = _packs(notes)
    assert [p for pack in packs for p in pack] == [n.path for n in notes]
    assert all(_size(notes, pack) <= LIMIT for pack in packs)
    assert len(packs) > 10  # about 4,000 bytes each: many packs, not one


def _fewest_packs(notes: list[PackNote]) -> int:
    """Packs filled to the limit one after another: no layout in path order needs fewer."""
    count, filled = 1, 0
    for note in notes:
        if filled and filled + note.size > LIMIT:
            count, filled = count + 1, 0
        filled += note.size
    return count


@pytest.mark.parametrize("spare", [0, 1, 5])
def test_the_budget_makes_fewer_larger_packs_down_to_the_fewest_possible(spare: int) -> None:
    notes = _vault(600)
    least = _fewest_packs(notes)
    tight = _packs(notes, budget=least + spare)
    assert len(tight) <= least + spare
    assert all(_size(notes, pack) <= LIMIT for pack in tight)
    assert [p for pack in tight for p in pack] == [n.path for n in notes]


def test_a_budget_below_the_fewest_possible_packs_says_how_many_are_needed() -> None:
    notes = _vault(600)
    least = _fewest_packs(notes)
    with pytest.raises(NotesDoNotFit) as info:
        _packs(notes, budget=least - 1)
    assert (info.value.needed, info.value.budget) == (least, least - 1)


@pytest.mark.parametrize("change", ["edit", "insert", "delete", "rename-within"])
def test_one_change_moves_only_the_pack_that_holds_it(change: str) -> None:
    """One pack changes; when the change takes it past the limit it is split, and only its notes move."""
    notes = _vault(800)
    before = _packs(notes)
    starts = set(_starts(before))
    rng = random.Random(change)
    for _ in range(40):
        i = rng.randrange(1, len(notes) - 1)
        changed = list(notes)
        if change == "edit":
            changed[i] = PackNote(notes[i].path, notes[i].size + 200)
        elif change == "insert":
            changed.insert(i, PackNote(notes[i].path[:-3] + "-new.md", 700))
        elif change == "delete":
            del changed[i]
        elif notes[i].path not in starts:  # a new name that sorts between the same neighbours
            changed[i] = PackNote(notes[i].path[:-3] + "-renamed.md", notes[i].size)
        after = _packs(changed, _starts(before))
        gone, new = set(before) - set(after), set(after) - set(before)
        assert len(gone) <= 1, change
        if len(new) > 1:  # split: the pieces hold exactly the grown pack's notes
            assert all(_size(changed, piece) <= LIMIT for piece in new)
            kept = {p for pack in after if pack not in new for p in pack}
            assert {p for piece in new for p in piece} == {n.path for n in changed} - kept


def test_a_pack_grown_past_the_limit_is_split_and_the_others_stay() -> None:
    notes = _vault(800)
    before = _packs(notes)
    victim = before[len(before) // 2]
    grown = [PackNote(n.path, n.size + LIMIT // len(victim)) if n.path in victim else n for n in notes]
    after = _packs(grown, _starts(before))
    assert set(before) - set(after) == {victim}
    pieces = set(after) - set(before)
    assert len(pieces) >= 2 and sorted(p for piece in pieces for p in piece) == sorted(victim)
    assert all(_size(grown, piece) <= LIMIT for piece in pieces)


def test_over_budget_the_smallest_neighbours_are_merged() -> None:
    notes = _vault(300)
    free = _packs(notes, target=2_000)
    merged = _packs(notes, _starts(free), budget=len(free) - 1, target=2_000)
    assert len(merged) == len(free) - 1
    joined = [p for p in merged if p not in free]
    assert len(joined) == 1
    sizes = [_size(notes, free[i]) + _size(notes, free[i + 1]) for i in range(len(free) - 1)]
    assert _size(notes, joined[0]) == min(sizes)


def test_the_first_layout_resynchronizes_after_an_insert() -> None:
    """Content-defined: a note inserted in a vault packed afresh moves no boundary but its own pack's."""
    notes = _vault(2_000, seed=3)
    base = set(_packs(notes))
    rng = random.Random(11)
    moved = []
    for _ in range(25):
        i = rng.randrange(len(notes))
        after = set(_packs([*notes[:i], PackNote(notes[i].path[:-3] + "-x.md", 400), *notes[i:]]))
        moved.append(len(after - base))
    assert max(moved) <= 5 and sum(moved) <= 1.5 * len(moved), moved  # of some 370 packs


def test_a_pack_whose_notes_are_gone_gives_no_pack_and_a_note_before_every_start_joins_the_first() -> None:
    notes = _vault(200)
    before = _packs(notes)
    gone = set(before[3])
    left = [n for n in notes if n.path not in gone]
    after = _packs(left, _starts(before))
    assert after == [p for p in before if p != before[3]]
    first = PackNote("0-first.md", 100)
    assert _packs([first, *left], _starts(before))[0] == ("0-first.md", *before[0])


note_lists = st.lists(st.tuples(st.text("abc/", min_size=1, max_size=8), st.integers(1, 3_000)), max_size=60,
                      unique_by=lambda t: t[0]).map(
    lambda items: sorted((PackNote(p + ".md", s) for p, s in items), key=lambda n: n.path))


@given(note_lists, st.lists(st.text("abc/", min_size=1, max_size=8), max_size=8), st.integers(1, 40))
def test_any_layout_is_a_partition_within_limits_and_replanning_it_changes_nothing(
        notes: list[PackNote], starts: list[str], budget: int) -> None:
    try:
        packs = _packs(notes, [s + ".md" for s in starts], budget=budget, target=2_500)
    except NotesDoNotFit as exc:
        assert exc.needed > budget
        return
    assert [p for pack in packs for p in pack] == [n.path for n in notes]
    assert len(packs) <= budget
    assert all(_size(notes, pack) <= LIMIT for pack in packs)
    assert _packs(notes, _starts(packs), budget=budget, target=2_500) == packs


def test_over_budget_packs_too_full_to_merge_in_pairs_are_cut_again_a_few_neighbours_at_a_time() -> None:
    """Packs 70% full: no two fit one pack, so the fewest neighbours that fit in one fewer (three into two) are cut
    again, where they are smallest; every other pack keeps its notes. Falling back to a new layout would move all."""
    notes = [PackNote(f"n{i:03}.md", 1_000) for i in range(70)]
    held = [tuple(n.path for n in notes[i:i + 7]) for i in range(0, 70, 7)]  # ten packs of 7,000 bytes
    held[4] = held[4][:6]  # the smallest neighbours: packs 4 and 5 with a note of 4 moved to 5
    held[5] = (notes[34].path, *held[5])
    packs = _packs(notes, _starts(held), budget=9)
    assert len(packs) == 9 and all(_size(notes, p) <= LIMIT for p in packs)
    kept = [p for p in packs if p in held]
    assert len(kept) == 7, packs  # three neighbours became two, the seven others stay
    assert sorted(p for pack in packs for p in pack) == [n.path for n in notes]


def test_over_budget_the_last_packs_of_the_vault_are_cut_again_when_they_are_the_smallest() -> None:
    """The neighbours cut again may end the vault: the last three packs, the only three that fit in two, become two
    and the seven before them stay."""
    notes = [PackNote(f"n{i:03}.md", 1_000 if i < 56 else 900) for i in range(70)]
    held = [tuple(n.path for n in notes[i:i + 7]) for i in range(0, 70, 7)]  # the last two packs 6,300 bytes
    packs = _packs(notes, _starts(held), budget=9)
    assert packs[:7] == held[:7]
    assert len(packs) == 9 and all(_size(notes, p) <= LIMIT for p in packs[7:])
    assert [p for pack in packs[7:] for p in pack] == [n.path for n in notes[49:]]
