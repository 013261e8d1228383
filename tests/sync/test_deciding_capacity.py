"""The capacity decided once, from what is known of a notebook: the user's word, the state file's memory, the
plan, the listing, the default."""

from __future__ import annotations

import pytest

from nlmsync.config import Settings
from nlmsync.store import LearnedCapacity, StateStore
from nlmsync.sync import Capacity, CapacitySource, KnownCapacity, decide_capacity, given_capacity

PLANS = (50, 100, 300, 600)


def decided(**known: object) -> tuple[int, CapacitySource]:
    capacity = decide_capacity(KnownCapacity(plans=PLANS, **known))  # type: ignore[arg-type]
    return capacity.value, capacity.source


def test_the_users_word_wins_over_what_was_remembered_the_plan_and_the_listing() -> None:
    assert decided(setting=7, remembered=9, plan=300, held=400) == (7, CapacitySource.SETTING)
    assert decided(remembered=9, plan=300, held=400) == (9, CapacitySource.REMEMBERED)


def test_without_a_word_of_the_user_the_plan_decides_else_the_default() -> None:
    assert decided(plan=300) == (300, CapacitySource.PLAN)
    assert decided(default=50) == (50, CapacitySource.DEFAULT)
    assert KnownCapacity(remembered=3).plan_decides is False and KnownCapacity().plan_decides is True


@pytest.mark.parametrize(("held", "expected"), [(50, (50, CapacitySource.DEFAULT)), (51, (100, CapacitySource.HELD)),
                                                (100, (100, CapacitySource.HELD)), (101, (300, CapacitySource.HELD)),
                                                (300, (300, CapacitySource.HELD)), (601, (601, CapacitySource.HELD))])
def test_a_notebook_holding_more_than_the_fallback_is_taken_for_the_smallest_plan_that_allows_it(held, expected):
    """With no capacity given, a notebook holding exactly a plan's limit is on that plan, not the next one up."""
    assert decided(held=held) == expected


def test_what_the_listing_holds_does_not_override_a_capacity_the_user_gave() -> None:
    assert decided(setting=50, held=100) == (50, CapacitySource.SETTING)
    assert decided(plan=300, held=100) == (300, CapacitySource.PLAN)


def test_a_refusal_lowers_the_capacity_until_the_capacity_it_was_learned_under_changes() -> None:
    learned = LearnedCapacity(held=40, under=50)
    assert decided(setting=50, learned=learned) == (40, CapacitySource.LEARNED)
    assert decided(setting=60, learned=learned) == (60, CapacitySource.SETTING)  # a new word of the user wins
    assert decided(default=50, learned=LearnedCapacity(held=50, under=50)) == (50, CapacitySource.DEFAULT)


def test_a_refusal_reported_to_the_capacity_gives_the_figure_later_runs_keep() -> None:
    capacity = decide_capacity(KnownCapacity(setting=50, plans=PLANS))
    refused = capacity.refused_at(42)
    assert (refused.value, refused.source, refused.under) == (42, CapacitySource.LEARNED, 50)
    assert refused == decide_capacity(KnownCapacity(setting=50, learned=LearnedCapacity(42, 50), plans=PLANS))
    again = refused.refused_at(41)
    assert (again.value, again.under) == (41, 50)
    assert capacity.refused_at(60) == Capacity(50, CapacitySource.SETTING, 50)


def test_what_the_settings_and_the_state_file_know(tmp_path) -> None:
    settings = Settings(vault=tmp_path, state=tmp_path / "state.db", capacity=80)
    assert given_capacity(settings) == 80 and given_capacity(Settings(vault=tmp_path)) is None
    store = StateStore.open(settings.state_path, settings)
    try:
        assert KnownCapacity.read(store, "nb", settings) == KnownCapacity(setting=80, default=80)
        store.remember_capacity("nb", 70)
        store.learn_capacity("nb", 60, 70)
        assert KnownCapacity.read(store, "nb", settings) == KnownCapacity(
            setting=80, remembered=70, learned=LearnedCapacity(60, 70), default=80)
    finally:
        store.close()


def test_the_user_word_given_now_wins_over_the_one_remembered_and_the_plan() -> None:
    assert decided(plan=300) == (300, CapacitySource.PLAN)
    assert decided(setting=80, plan=300) == (80, CapacitySource.SETTING)
    assert decided(remembered=80, plan=300) == (80, CapacitySource.REMEMBERED)
    assert decided(setting=120, remembered=80, plan=300) == (120, CapacitySource.SETTING)


def test_a_learned_capacity_holds_under_the_figure_it_was_learned_under_and_never_raises_it() -> None:
    learned = LearnedCapacity(50, 300)  # refused as full at 50 sources while the plan allowed 300
    assert decide_capacity(KnownCapacity(learned=learned, plan=300)) == Capacity(50, CapacitySource.LEARNED, 300)
    assert decided(setting=300, learned=learned, plan=300) == (50, CapacitySource.LEARNED)  # the same figure, given
    # a different figure is the user's word (or a new plan): what was learned under another one no longer holds
    assert decided(setting=200, learned=learned, plan=300) == (200, CapacitySource.SETTING)
    assert decided(learned=learned, plan=100) == (100, CapacitySource.PLAN)
    assert decided(learned=LearnedCapacity(300, 300), plan=300) == (300, CapacitySource.PLAN)
    assert decided(learned=LearnedCapacity(310, 300), plan=300) == (300, CapacitySource.PLAN)


def test_a_capacity_is_learned_under_its_own_value_unless_a_refusal_lowered_it() -> None:
    assert decide_capacity(KnownCapacity(setting=50)).under == 50
    assert decide_capacity(KnownCapacity(setting=50, learned=LearnedCapacity(40, 50))).under == 50



def test_a_refusal_beyond_the_plans_limit_makes_the_plan_the_capacity() -> None:
    """A notebook mirrored on Pro, its plan now Standard: it holds 121 sources, more than Standard's 50, which
    alone would say it is on a larger plan; once the server refuses an add at 121, the plan is believed."""
    assert decided(plan=50, held=121) == (300, CapacitySource.HELD)
    capacity = decide_capacity(KnownCapacity(plan=50, held=121, plans=PLANS))
    refused = capacity.refused_at(121)
    assert (refused.value, refused.source) == (50, CapacitySource.PLAN)
    assert decided(plan=50, held=121, learned=LearnedCapacity(121, 300)) == (50, CapacitySource.PLAN)
    # the user's word still wins, and a refusal below the plan's limit is learned as before
    assert decided(setting=300, plan=50, held=121, learned=LearnedCapacity(121, 300)) == (121, CapacitySource.LEARNED)
    assert decided(plan=50, held=45, learned=LearnedCapacity(45, 50)) == (45, CapacitySource.LEARNED)
    # refused at exactly a larger plan's limit: that plan's notebook (shared by an account on it), not a downgrade
    assert decided(plan=50, held=300, learned=LearnedCapacity(300, 300)) == (300, CapacitySource.HELD)
