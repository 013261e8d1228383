"""What `status` tells the user to do next (`next_steps`), from what it found."""

from __future__ import annotations

from nlmsync.app.messages import next_steps
from nlmsync.app.results import StatusReport


def test_a_notebook_over_its_capacity_says_where_to_set_the_plans_limit() -> None:
    report = StatusReport(server="fake", notebook_id="nb", title="Notes", capacity=50, source_count=51)
    steps = next_steps(report, [])
    assert [(s.why, s.command) for s in steps] == [(
        "the notebook holds 51 sources, capacity is 50",
        "set 'capacity' to your plan's limit (50 free, 100 Plus, 300 Pro, 600 Ultra) in .nlmsync/config.toml or "
        "NLMSYNC_CAPACITY")]
    assert next_steps(report.model_copy(update={"source_count": 50}), []) == []  # at capacity: nothing to do
