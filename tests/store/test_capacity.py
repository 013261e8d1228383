"""What the state file keeps of a notebook's capacity: the figure given on an earlier run (remembered per
notebook), and what a server's refusal of an add as full taught (with the figure it was learned under). Which
figure a run is kept to is decided from these by `sync.decide_capacity` (`tests/sync/test_deciding_capacity.py`)."""

from __future__ import annotations

from tests.store.helpers import NB

from nlmsync.store import LearnedCapacity, StateStore


def test_a_given_capacity_is_remembered_per_notebook_for_runs_that_give_none(store: StateStore) -> None:
    assert store.remembered_capacity(NB) is None
    store.remember_capacity(NB, 80)
    assert store.remembered_capacity(NB) == 80
    assert store.remembered_capacity("nb-other") is None  # remembered per notebook
    store.remember_capacity(NB, 90)
    assert store.remembered_capacity(NB) == 90


def test_a_refusal_is_kept_with_the_figure_it_was_learned_under(store: StateStore) -> None:
    assert store.learned_capacity(NB) is None
    store.learn_capacity(NB, 50, 300)  # refused as full at 50 sources while the plan allowed 300
    assert store.learned_capacity(NB) == LearnedCapacity(50, 300)
    assert store.learned_capacity("nb-other") is None
    store.learn_capacity(NB, 40, 300)
    assert store.learned_capacity(NB) == LearnedCapacity(40, 300)
