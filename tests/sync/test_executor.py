"""The executor at its own seam (`carry.executor.Executor`): units of a test's own making (`units.Unit`) carried
out against the stub client: adds, adoption of what is listed already, the order units record in, room, and
the first error that stops a run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import anyio
import pytest
from tests.sync.stub import StubClient

from nlmsync.errors import (AuthenticationRequiredError, CapacityError, DiskFullError, FileOutsideServerFoldersError,
                            NlmsyncError, ServerCapacityError, ServerError, ServerUnreachableError)
from nlmsync.store import SourceMapping
from nlmsync.sync.capacity import CapacitySource
from nlmsync.sync.branches import Branch, Decision
from nlmsync.sync.carry.executor import Executor, why_stopped
from nlmsync.sync.notes.decide import PlannedNote
from nlmsync.sync.notes.units import NoteUnit, NotesAlone, note_units
from nlmsync.sync.prepared import prepare_note
from nlmsync.sync.report import NoteOutcome
from nlmsync.sync.units import Turn, Upload, Uploaded

pytestmark = pytest.mark.anyio


@dataclass
class Step:
    """A unit that uploads `titles` and records what came of them in `log` (in its turn)."""

    name: str
    titles: Sequence[str]
    log: list[tuple[str, str, object]]
    replaced: Sequence[str] = ()
    evictions: list[NoteOutcome] = field(default_factory=list)

    def start(self) -> list[Upload]:
        return [Upload(f"text of {title}", title, lambda listed: listed[0] if listed else None)
                for title in self.titles]

    def failed(self, message: str, *, not_tried: bool = False) -> None:
        self.log.append(("not tried" if not_tried else "failed", self.name, message))

    async def finish(self, uploaded: Uploaded, turn: Turn) -> Sequence[str]:
        await turn.wait()
        kind = "recorded not tried" if uploaded.not_tried else "recorded"
        self.log.append((kind, self.name, uploaded.error or [(a.source_id, a.adopted) for a in uploaded.added]))
        turn.passed()
        return self.replaced


class Gated(StubClient):
    """The stub, with the add of a title held until the test lets it through."""

    def __init__(self) -> None:
        super().__init__()
        self.gates: dict[str, anyio.Event] = {}

    async def source_add_text(self, notebook_id: str, text: str, title: str, wait: bool | None = None):
        if title in self.gates:
            await self.gates[title].wait()
        return await super().source_add_text(notebook_id, text, title, wait)


async def test_units_record_in_the_order_they_started_whatever_order_their_uploads_land(bench):
    client = bench.client = Gated()
    client.gates["slow"] = anyio.Event()
    log: list[tuple[str, str, object]] = []
    run = bench.run(concurrency=4)
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    async with anyio.create_task_group() as tg:
        async def let_through_once_the_fast_one_landed() -> None:
            while "fast" not in client.titles():
                await anyio.sleep(0)
            client.gates["slow"].set()

        tg.start_soon(let_through_once_the_fast_one_landed)
        stop = await executor.execute([Step("first", ["slow"], log), Step("second", ["fast"], log)])
    assert stop is None and client.titles() == ["fast", "slow"]
    assert [(kind, name) for kind, name, _ in log] == [("recorded", "first"), ("recorded", "second")]


async def test_an_upload_listed_already_is_adopted_and_a_lost_answer_settled_by_a_fresh_listing(bench):
    listed = bench.client.put("there already")
    bench.client.lose_answer_of_add = 1
    log: list[tuple[str, str, object]] = []
    run = bench.run()
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    stop = await executor.execute([Step("u", ["there already", "lost"], log)])
    [(_, _, added)] = log
    assert stop is None and bench.client.mutating() == ["source_add"]  # the lost add is not sent again
    [landed] = [s.id for s in bench.client.sources.values() if s.title == "lost"]
    assert added == [(listed, True), (landed, True)]


async def test_the_first_error_no_upload_can_survive_stops_the_run_and_the_rest_are_not_tried(bench):
    bench.client.refuse_add = lambda title: ServerCapacityError("the notebook is full") if title == "b" else None
    log: list[tuple[str, str, object]] = []
    run = bench.run(concurrency=1, capacity=10)
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    stop = await executor.execute([Step(n, [n], log) for n in "abcd"])
    assert isinstance(stop, CapacityError) and executor.full
    assert [(kind, what) for kind, _, what in log] == [
        ("recorded", [("s0", False)]), ("recorded", "the notebook is full"),
        ("recorded not tried", "not tried: the notebook is full"), ("recorded not tried", "not tried: the notebook is full")]
    assert bench.client.titles() == ["a"]
    # the refusal is reported to the capacity: this run's report and later runs keep the notebook to what it held
    assert (run.deps.capacity.value, run.deps.capacity.source) == (1, CapacitySource.LEARNED)
    learned = bench.store.learned_capacity("nb")
    assert learned is not None and (learned.held, learned.under) == (1, 10)


@pytest.mark.parametrize(("error", "why"), [
    (AuthenticationRequiredError("login expired"), "the server needs a Google login"),
    (FileOutsideServerFoldersError("not in NOTEBOOKLM_ALLOWED_FILE_DIRS"), "the server may not read the files"),
    (ServerUnreachableError("no answer"), "the server cannot be used")], ids=["login", "folders", "unreachable"])
async def test_a_unit_not_tried_after_a_server_error_says_why_the_run_stopped(bench, error: NlmsyncError, why: str):
    bench.client.refuse_add = lambda title: error if title == "b" else None
    log: list[tuple[str, str, object]] = []
    run = bench.run(concurrency=1)
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    stop = await executor.execute([Step(n, [n], log) for n in "abc"])
    assert stop is error
    assert [(kind, what) for kind, _, what in log] == [
        ("recorded", [("s0", False)]), ("recorded", str(error)), ("recorded not tried", f"not tried: {why}")]


def test_a_run_stopped_by_its_state_file_says_so_to_each_unit_not_tried() -> None:
    assert why_stopped(DiskFullError("state.db")) == "the state file cannot be written"


async def test_an_upload_refused_fails_its_unit_alone(bench):
    bench.client.refuse_add = lambda title: ServerError("Internal error") if title == "b" else None
    log: list[tuple[str, str, object]] = []
    run = bench.run()
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    stop = await executor.execute([Step(n, [n], log) for n in "abc"])
    assert stop is None and [entry[2] for entry in log] == [[("s0", False)], "Internal error", [("s1", False)]]


async def test_a_unit_without_room_waits_then_evicts_a_managed_note_and_deletes_what_it_replaced(bench):
    old = bench.client.put("old.md · 00000000")
    bench.deps(capacity=2).store.add_new_mappings([SourceMapping(notebook_id="nb", path="old.md", source_id=old,
                                                                 content_hash="h", title="old.md · 00000000")])
    replaced = bench.client.put("replaced")
    log: list[tuple[str, str, object]] = []
    run = bench.run(capacity=2)
    executor: Executor[Step] = Executor(run.deps, run.remote, set())
    stop = await executor.execute([Step("new", ["new"], log, replaced=[replaced]), Step("next", ["next"], log)])
    assert stop is None and bench.client.titles() == ["new", "next"]
    units_evicted = [o.path for o in bench.store.recent_evictions("nb", 5)]
    assert units_evicted == ["old.md"] and bench.store.mappings_by_path("nb", "old.md") == []


async def test_a_split_note_whose_upload_is_refused_fails_whole_and_the_next_note_goes_on(bench):
    split = prepare_note("big.md", "".join(f"Paragraph {i} holds words enough for a part.\n\n" for i in range(3)),
                         max_words=10)
    assert len(split.parts) == 3
    bench.client.refuse_add = lambda title: ServerError("Internal error") if title == split.parts[1].title else None
    run = bench.run(concurrency=1)
    in_order = note_units(NotesAlone(run.deps, run.remote), [
        PlannedNote(split, Decision(Branch.ADDED)), PlannedNote(prepare_note("a.md", "alpha\n"), Decision(Branch.ADDED))])
    executor: Executor[NoteUnit] = Executor(run.deps, run.remote, set())
    assert await executor.execute(in_order.units) is None
    assert [(o.path, o.branch, o.part_count, o.error, o.not_tried) for o in in_order.outcomes()] == [
        ("big.md", Branch.FAILED, 3, "Internal error", False), ("a.md", Branch.ADDED, 1, None, False)]


async def test_the_notes_a_stopped_run_never_tried_are_reported_not_tried(bench):
    """A full notebook of one: b waits for a's room, and a's upload finds the login gone; b, and c popped after
    the run stopped, are not tried, and say so apart from the note that failed."""
    bench.client.refuse_add = lambda title: AuthenticationRequiredError("login expired") if "a.md" in title else None
    run = bench.run(concurrency=1, capacity=1)
    in_order = note_units(NotesAlone(run.deps, run.remote), [
        PlannedNote(prepare_note(p, f"{p}\n"), Decision(Branch.ADDED)) for p in ("a.md", "b.md", "c.md")])
    executor: Executor[NoteUnit] = Executor(run.deps, run.remote, set())
    assert isinstance(await executor.execute(in_order.units), AuthenticationRequiredError)
    why = "not tried: the server needs a Google login"
    assert [(o.path, o.branch, o.error, o.not_tried) for o in in_order.outcomes()] == [
        ("a.md", Branch.FAILED, "login expired", False), ("b.md", Branch.FAILED, why, True),
        ("c.md", Branch.FAILED, why, True)]
    assert bench.client.mutating() == ["source_add"]


async def test_a_reused_note_whose_row_names_a_replaced_id_is_recorded_under_the_id_it_resolves_to(bench):
    """The row of an unchanged note names a source that was replaced (an alias): the note is reused with no call,
    and its row is rewritten to the live source, so the alias is no longer needed to find it."""
    note = prepare_note("a.md", "alpha\n")
    live = bench.client.put(note.parts[0].title, "alpha\n")
    store = bench.deps().store
    store.add_new_mappings([SourceMapping(notebook_id="nb", path="a.md", source_id="s-replaced",
                                          content_hash=note.parts[0].content_hash, title=note.parts[0].title)])
    store.register_source_alias("s-replaced", live)
    run = bench.run()
    in_order = note_units(NotesAlone(run.deps, run.remote), [
        PlannedNote(note, Decision(Branch.REUSED, keep=(live,), canonicalize=True))])
    executor: Executor[NoteUnit] = Executor(run.deps, run.remote, set())
    assert await executor.execute(in_order.units) is None
    assert [(o.path, o.branch) for o in in_order.outcomes()] == [("a.md", Branch.REUSED)]
    assert [m.source_id for m in store.mappings_by_path("nb", "a.md")] == [live] and bench.client.mutating() == []
