"""The capacity a notebook is kept to: given for the run, remembered from an earlier run, or the fallback (the
plan's, the default); a capacity learned from a server that refused an add as full holds until the figure it was
learned under changes."""

from __future__ import annotations

from tests.store.helpers import NB

from nlmsync.store import Capacity, StateStore

PLAN = Capacity(300, "plan")


def test_a_given_capacity_wins_and_is_remembered_for_runs_that_give_none(store: StateStore) -> None:
    assert store.capacity(NB, None, PLAN) == PLAN
    assert store.remembered_capacity(NB) is None
    assert store.capacity(NB, 80, PLAN) == Capacity(80, "setting")
    store.remember_capacity(NB, 80)
    assert store.remembered_capacity(NB) == 80
    assert store.capacity(NB, None, PLAN) == Capacity(80, "remembered")
    assert store.capacity(NB, 120, PLAN) == Capacity(120, "setting")  # the run's own word wins
    assert store.capacity("nb-other", None, PLAN) == PLAN  # remembered per notebook
    store.remember_capacity(NB, 90)
    assert store.remembered_capacity(NB) == 90


def test_a_learned_capacity_holds_under_the_figure_it_was_learned_under(store: StateStore) -> None:
    store.learn_capacity(NB, 50, 300)  # refused as full at 50 sources while the plan allowed 300
    assert store.capacity(NB, None, PLAN) == Capacity(50, "learned", 300)
    assert store.capacity(NB, 300, PLAN) == Capacity(50, "learned", 300)  # the same figure, given
    # a different figure is the user's word (or a new plan): what was learned under another one no longer holds
    assert store.capacity(NB, 200, PLAN) == Capacity(200, "setting")
    assert store.capacity(NB, None, Capacity(100, "plan")) == Capacity(100, "plan")
    assert store.capacity("nb-other", None, PLAN) == PLAN


def test_a_learned_capacity_never_raises_the_figure(store: StateStore) -> None:
    store.learn_capacity(NB, 300, 300)
    assert store.capacity(NB, None, PLAN) == PLAN
    store.learn_capacity(NB, 310, 300)
    assert store.capacity(NB, None, PLAN) == PLAN


def test_a_capacity_is_given_as_its_own_value_unless_learned_under_another() -> None:
    assert Capacity(50, "setting").given == 50
    assert Capacity(40, "learned", 50).given == 50
