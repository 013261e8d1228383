"""Benchmark: a whole vault kept in packs (many notes per source), against the fake NotebookLM server.

Run by hand, never in CI; the machine may be shared, so compare figures of one run. The corpora are read from
the folder `benchmarks/corpora.py` builds (`--corpora` or `BENCHMARK_CORPORA` names another) and written out once into
`--cache` (outside the repository: `~/.cache/nlmsync-benchmarks` by default); each case works on a copy of
its vault that keeps the files' modification times.

Cases, on obsidian-help (6,277 notes) and tldr (38,404 notes):

- **mirror**, at each `--capacities` value, with the fake in process at zero latency and with `--latency`
  per call: the first `refresh --all` of a new notebook (sources used, packs, `source_add` calls, wall time
  and nlmsync's own time: the wall time less the time during which a server call was under way), then the
  idle `refresh --all` after it (its mutating calls and notebook listings).
- **churn**, in the same notebooks: one note edited, one inserted, one deleted, one renamed (within its
  folder, to a name that sorts right after its own), each followed by `refresh --all`, `--trials` times per
  kind on notes drawn with a fixed seed: the most `source_add` and `source_delete` calls one change cost, and
  nlmsync's own time (median).
- **citations**, at each capacity: `--questions` questions drawn from the notes' own lines (a line of a note as
  the question), each asked in a new conversation of the mirrored notebook; per citation, whether it was
  mapped to a note of the cited pack that holds the quoted text (checked against the pack's text as the
  fake holds it) and whether its heading is the heading above that passage in the note. The same questions
  on a new notebook that is not packed (`pack = "never"`: each question's selection uploaded one note per
  source, evicting as needed): sources asked per question and adds paid.
- **fit**: `refresh --all --dry-run` at `--small-capacity`, where the notes do not fit even in packs: the exit
  code and the line saying by how much.
- **scale**: the generated vault of `--scale-notes` notes of `scale_vault.py` (1–10 KB each, drawn from the three
  corpora) at capacity 600: nlmsync's own time for the first plan (`--dry-run`) and for the
  first `refresh --all`, with the peak memory of that process; then the idle `refresh --all` as a command
  (`python -m nlmsync … --server "fake --state F"`): wall time from the process's start less the time the fake
  spends loading its state, answering and saving (it runs inside the same process), and the calls it made.

    .venv/bin/python benchmarks/pack.py [--corpora DIR] [--cache DIR] [--cases mirror,churn,citations,fit,scale]
        [--capacities 50 300] [--latency 0.15] [--trials 5] [--questions 500] [--scale-notes 100000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from scale_vault import CORPORA as CORPORA_FOLDER
from scale_vault import DEFAULT_CACHE, materialized, scale_vault  # benchmarks/scale_vault.py

from nlmsync.app import Orchestrator
from nlmsync.config import Settings
from nlmsync.errors import CapacityError
from nlmsync.fake.faults import Faults
from nlmsync.fake.server import build_fake_server
from nlmsync.fake.state import FakeNotebookLM
from nlmsync.notebooklm import connect
from nlmsync.search import markdown_lines
from nlmsync.store import StateStore
from nlmsync.vault import parse_front_matter
from sync import MUTATING, TimedClient  # benchmarks/sync.py

CORPORA = ("obsidian-help", "tldr")
SEED = 23


# --- corpora and vaults ---------------------------------------------------------------------------

def vault_notes(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md"))


# --- timing ------------------------------------------------------------------------------------------

@dataclass
class Timed:
    wall: float
    own: float
    calls: dict[str, int]
    result: Any = None
    error: BaseException | None = None

    @property
    def mutating(self) -> int:
        return sum(n for tool, n in self.calls.items() if tool in MUTATING)


@dataclass
class World:
    """A vault copy, its state file and a fake notebook, run in process."""

    vault: Path
    fake: FakeNotebookLM
    settings: Settings
    server: Any = None
    notebook_id: str = ""

    @classmethod
    def make(cls, source: Path, root: Path, *, capacity: int, latency: float = 0.0, **settings: Any) -> World:
        vault = root / "vault"
        if not vault.exists():
            shutil.copytree(source, vault)  # copy2: modification times kept, so an idle run reads nothing
        fake = FakeNotebookLM(capacity=capacity, faults=Faults(latency=latency))
        notebook_id = fake.apply("notebook_create", {"title": "bench"})["notebook_id"]
        state = root / f"state-{notebook_id}.db"
        world = cls(vault, fake, Settings(vault=vault, state=state, notebook=notebook_id, capacity=capacity,
                                          **settings))
        world.server = build_fake_server(fake)  # built once: not nlmsync's cost
        world.notebook_id = notebook_id
        return world

    async def timed(self, action: Callable[[Orchestrator], Awaitable[Any]]) -> Timed:
        """One nlmsync run in process (open the store, connect, act): wall time, own time, the calls it made."""
        mark = len(self.fake.calls)
        start = time.perf_counter()
        store = StateStore.open(self.settings.state_path, self.settings)
        result: Any = None
        error: BaseException | None = None
        try:
            async with connect(self.server, self.settings) as client:
                timed = TimedClient(client)
                try:
                    result = await action(Orchestrator(self.settings, store, timed))
                except CapacityError as exc:
                    error = exc
        finally:
            store.close()
        wall = time.perf_counter() - start
        calls: dict[str, int] = {}
        for call in self.fake.calls[mark:]:
            calls[call.tool] = calls.get(call.tool, 0) + 1
        return Timed(wall, wall - timed.in_calls, calls, result, error)

    def fresh_machine(self, root: Path) -> World:
        """The same vault and notebook seen from a machine with no state file (a CI runner, a lost `.nlmsync/`)."""
        settings = self.settings.model_copy(update={"state": root / f"fresh-{self.notebook_id}.db"})
        return World(self.vault, self.fake, settings, self.server, self.notebook_id)

    async def refresh_all(self, dry_run: bool = False) -> Timed:
        return await self.timed(lambda orch: orch.refresh(all_notes=True, dry_run=dry_run))

    def sources(self) -> dict[str, Any]:
        return self.fake.notebooks[self.notebook_id].sources


# --- mirror and churn ---------------------------------------------------------------------------------

CHURN = ("edited", "inserted", "deleted", "renamed")


def change(vault: Path, kind: str, path: str, trial: int) -> None:
    """One change to the vault: `path` edited, a note inserted beside it, deleted, or renamed beside itself."""
    file = vault / path
    if kind == "edited":
        file.write_text(file.read_text(encoding="utf-8") + f"\nEdited for the benchmark ({trial}).\n",
                        encoding="utf-8")
    elif kind == "inserted":
        file.with_name(f"{file.stem}.inserted-{trial}.md").write_text(
            f"# Inserted {trial}\n\nA note inserted beside {file.name} by the benchmark.\n", encoding="utf-8")
    elif kind == "deleted":
        file.unlink()
    else:  # ".renamed" sorts right after the note's own name, before any other note of its folder but a few
        file.rename(file.with_name(f"{file.stem}.renamed-{trial}.md"))


@dataclass
class ChurnFigures:
    adds: list[int] = field(default_factory=list)
    deletes: list[int] = field(default_factory=list)
    own: list[float] = field(default_factory=list)


async def mirror_and_churn(source: Path, work: Path, capacity: int, latency: float, trials: int,
                           churn: bool) -> dict[str, Any]:
    world = World.make(source, work, capacity=capacity, latency=latency)
    first = await world.refresh_all()
    if first.error is not None:
        return {"error": str(first.error)}
    report = first.result
    layout = report.layout
    idle = await world.refresh_all()
    fresh = await world.fresh_machine(work).refresh_all()
    assert fresh.error is None, fresh.error
    out: dict[str, Any] = {
        "sources": len(world.sources()), "packs": layout.pack_count, "alone": layout.alone_note_count,
        "adds": first.calls.get("source_add", 0), "wall": first.wall, "own": first.own,
        "idle_wall": idle.wall, "idle_own": idle.own, "idle_mutating": idle.mutating,
        "idle_gets": idle.calls.get("notebook_get", 0),
        "fresh_own": fresh.own, "fresh_wall": fresh.wall, "fresh_calls": fresh.calls}
    if not churn:
        return out
    rng = random.Random(SEED)
    figures = {kind: ChurnFigures() for kind in CHURN}
    for trial in range(trials):
        for kind in CHURN:
            notes = vault_notes(world.vault)
            path = rng.choice(notes)
            change(world.vault, kind, path, trial)
            run = await world.refresh_all()
            assert run.error is None, run.error
            figures[kind].adds.append(run.calls.get("source_add", 0))
            figures[kind].deletes.append(run.calls.get("source_delete", 0))
            figures[kind].own.append(run.own)
    out["churn"] = {kind: {"adds": max(f.adds), "deletes": max(f.deletes), "own": statistics.median(f.own),
                           "adds_all": f.adds, "deletes_all": f.deletes} for kind, f in figures.items()}
    return out


# --- citations -------------------------------------------------------------------------------------------

def _flat(text: str) -> str:
    return " ".join(text.split())


def question_lines(vault: Path, count: int) -> list[tuple[str, str]]:
    """`count` (path, line) pairs: a text line of a note (list and quote marks taken off, 4 to 40 words), drawn
    with a fixed seed, one per note."""
    rng = random.Random(SEED)
    notes = vault_notes(vault)
    rng.shuffle(notes)
    picked: list[tuple[str, str]] = []
    for path in notes:
        text = (vault / path).read_text(encoding="utf-8")
        lines = []
        for line in markdown_lines(text, parse_front_matter(text).body_start):
            if line.kind != "text":
                continue
            words = line.text.strip().lstrip("-*>+ ").strip()
            if 4 <= len(words.split()) <= 40:
                lines.append(words)
        if lines:
            picked.append((path, rng.choice(lines)))
        if len(picked) == count:
            break
    return picked


def _blocks(pack_text: str, paths: list[str]) -> dict[str, str]:
    """A pack's text cut into its notes' texts, at each note's path heading (a line `# PATH` and a blank line)."""
    starts: list[tuple[int, int, str]] = []
    at = 0
    for path in paths:
        heading = f"# {path}\n\n"
        found = pack_text.find(heading, at)
        while found > 0 and pack_text[found - 1] != "\n":
            found = pack_text.find(heading, found + 1)
        assert found >= 0, path
        starts.append((found, found + len(heading), path))
        at = found + len(heading)
    ends = [s for s, _, _ in starts[1:]] + [len(pack_text)]
    return {path: pack_text[body:end] for (_, body, path), end in zip(starts, ends, strict=True)}


def heading_of_quote(text: str, quote: str) -> tuple[bool, str | None]:
    """Whether `quote` (white space flattened) is in the note's text outside its headings, and the heading above
    its first place: the last ATX or setext heading before it (front matter and code fences are no headings)."""
    kept: list[tuple[int, str]] = []  # (offset, flattened line) of the lines a passage can quote
    headings: list[tuple[int, str]] = []
    for line in markdown_lines(text, parse_front_matter(text).body_start):
        if line.kind in ("heading", "setext"):
            if line.kind == "setext":
                del kept[len(kept) - line.absorbed:]
            headings.append((line.offset, line.text))
        elif line.kind in ("text", "code") and line.text.strip():
            kept.append((line.offset, _flat(line.text)))
    joined, positions = "", []
    for offset, flat in kept:
        positions.append((len(joined), offset))
        joined += flat + " "
    found = joined.find(_flat(quote))
    if found < 0:
        front = parse_front_matter(text).body_start
        return _flat(quote) in _flat(text[:front]), None
    offset = max(o for j, o in positions if j <= found)
    above = [h for o, h in headings if o <= offset]
    return True, above[-1] if above else None


@dataclass
class CitationFigures:
    questions: int = 0
    citations: int = 0
    right_note: int = 0
    located: int = 0
    ambiguous: int = 0
    right_heading: int = 0
    sources_asked: list[int] = field(default_factory=list)
    adds: int = 0
    wrong: list[str] = field(default_factory=list)


def judge(vault: Path, world: World, result: Any, figures: CitationFigures) -> None:
    """Each citation of `result` against the text of the source it cites, as the fake holds it."""
    packs = {p.source_id: p for p in result.packs}
    alone = {sid: o.path for o in result.notes if o.pack is None for sid in o.source_ids}
    for citation in result.citations:
        if not citation.cited_text:
            continue
        figures.citations += 1
        sid = citation.source_id
        if sid in packs:
            text = world.fake.source(sid).text
            holders = [p for p, body in _blocks(text, packs[sid].paths).items() if _flat(citation.cited_text) in _flat(body)]
        else:
            holders = [alone[sid]] if sid in alone else []
        figures.located += bool(citation.located)
        figures.ambiguous += len(holders) > 1
        if citation.path in holders:
            figures.right_note += 1
            note = (vault / citation.path).read_text(encoding="utf-8")
            inside, heading = heading_of_quote(note, citation.cited_text)
            figures.right_heading += inside and heading == citation.heading
            if not (inside and heading == citation.heading) and len(figures.wrong) < 5:
                figures.wrong.append(f"heading {citation.heading!r}, expected {heading!r}: {citation.path}: "
                                     f"{citation.cited_text[:80]!r}")
        elif len(figures.wrong) < 5:
            figures.wrong.append(f"note {citation.path!r}, held by {holders[:3]}: {citation.cited_text[:80]!r}")


async def ask_all(world: World, questions: list[tuple[str, str]]) -> CitationFigures:
    """Each question asked in a new conversation, in one session (as `serve` asks: the index stays loaded)."""
    figures = CitationFigures()

    async def session(orch: Orchestrator) -> None:
        for _, line in questions:
            mark = len(world.fake.calls)
            result = await orch.ask(line, new=True)
            figures.questions += 1
            figures.adds += sum(1 for c in world.fake.calls[mark:] if c.tool == "source_add")
            figures.sources_asked.append(len(result.source_ids))
            judge(world.vault, world, result, figures)

    run = await world.timed(session)
    assert run.error is None, run.error
    return figures


async def citations_case(source: Path, work: Path, capacity: int, questions: list[tuple[str, str]]
                         ) -> dict[str, CitationFigures]:
    packed = World.make(source, work, capacity=capacity)
    mirrored = await packed.refresh_all()
    assert mirrored.error is None, mirrored.error
    out = {"packed": await ask_all(packed, questions)}
    single = World.make(source, work, capacity=capacity, pack="never")
    out["one note per source"] = await ask_all(single, questions)
    return out


# --- fit ---------------------------------------------------------------------------------------------------

def fit_case(source: Path, work: Path, capacity: int) -> tuple[int, str]:
    """`refresh --all --dry-run` at a capacity too small for the notes: the command's exit code and its error."""
    vault = work / "vault"
    if not vault.exists():
        shutil.copytree(source, vault)
    done = subprocess.run([sys.executable, "-m", "nlmsync", "--vault", str(vault), "--state", str(work / "fit.db"),
                           "--server", f"fake --capacity {capacity} --state {work / 'fit-fake.json'}",
                           "--notebook", "new:fit", "refresh", "--all", "--dry-run"],
                          capture_output=True, text=True, env={**os.environ, "NLMSYNC_CAPACITY": str(capacity)},
                          check=False)
    return done.returncode, done.stderr.strip().splitlines()[0] if done.stderr.strip() else done.stdout[-300:]


# --- scale ---------------------------------------------------------------------------------------------------

SCALE_CAPACITY = 600


async def scale_first(vault: Path, work: Path) -> dict[str, Any]:
    """In this process (run alone, for its peak memory): the first plan and the first `refresh --all`; the fake's
    state saved for the idle command."""
    fake = FakeNotebookLM(capacity=SCALE_CAPACITY, state_path=work / "fake.json")
    notebook_id = fake.apply("notebook_create", {"title": "bench"})["notebook_id"]
    world = World(vault, fake, Settings(vault=vault, state=work / "state.db", notebook=notebook_id,
                                        capacity=SCALE_CAPACITY), build_fake_server(fake), notebook_id)
    plan = await world.refresh_all(dry_run=True)
    first = await world.refresh_all()
    assert first.error is None, first.error
    layout = first.result.layout
    fake.save()
    return {"notebook_id": notebook_id, "plan_own": plan.own, "first_own": first.own, "first_wall": first.wall,
            "adds": first.calls.get("source_add", 0), "packs": layout.pack_count, "alone": layout.alone_note_count,
            "sources": len(world.sources()), "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def scale_first_in_child(corpora: Path, cache: Path, notes: int, work: Path) -> dict[str, Any]:
    """`scale_first` in a process of its own (this script again), for that process's peak memory."""
    done = subprocess.run([sys.executable, __file__, "--corpora", str(corpora), "--cache", str(cache),
                           "--scale-notes", str(notes), "--scale-child", str(work)],
                          capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


IDLE_DRIVER = """
import json, resource, sys, time
from nlmsync.fake import state as fake_state

spent = [0.0, 0.0]
calls = {}

def timed(method, count=False):
    def wrapper(self, *args, **kwargs):
        start, cpu = time.perf_counter(), time.process_time()
        try:
            return method(self, *args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - start
            spent[1] += time.process_time() - cpu
            if count:
                calls[args[0]] = calls.get(args[0], 0) + 1
    return wrapper

cls = fake_state.FakeNotebookLM
cls.__init__, cls.apply, cls.save = timed(cls.__init__), timed(cls.apply, count=True), timed(cls.save)
sys.argv = ["nlmsync", *sys.argv[1:]]
from nlmsync.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"fake": spent[0], "fake_cpu": spent[1], "cpu": usage.ru_utime + usage.ru_stime, "calls": calls,
                  "code": code}), file=sys.stderr)
"""


def scale_idle(vault: Path, work: Path, notebook_id: str, repeats: int) -> list[dict[str, Any]]:
    """The idle `refresh --all` as a command, `repeats` times: wall time from start to exit, less the fake's; and
    the process's CPU time less the fake's."""
    command = [sys.executable, "-c", IDLE_DRIVER, "--vault", str(vault), "--state", str(work / "state.db"),
               "--server", f"fake --capacity {SCALE_CAPACITY} --state {work / 'fake.json'}",
               "--notebook", notebook_id, "refresh", "--all", "--json"]
    env = {**os.environ, "NLMSYNC_CAPACITY": str(SCALE_CAPACITY)}
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        wall = time.perf_counter() - start
        measured = json.loads(done.stderr.strip().splitlines()[-1])
        runs.append({"wall": wall, "own": wall - measured["fake"], "fake": measured["fake"],
                     "own_cpu": measured["cpu"] - measured["fake_cpu"], "calls": measured["calls"],
                     "code": measured["code"]})
    return runs


# --- printing --------------------------------------------------------------------------------------------------

def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%} ({part:,}/{whole:,})" if whole else "n/a"


async def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpora", type=Path, default=CORPORA_FOLDER)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--cases", default="mirror,churn,citations,fit,scale")
    parser.add_argument("--corpus", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument("--capacities", type=int, nargs="+", default=[50, 300])
    parser.add_argument("--latency", type=float, default=0.15)
    parser.add_argument("--trials", type=int, default=5, help="changes of each kind")
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--small-capacity", type=int, default=12)
    parser.add_argument("--scale-notes", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3, help="idle commands at scale: the fastest of N")
    parser.add_argument("--scale-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    cases = set(args.cases.split(","))

    if args.scale_child is not None:  # the first plan and refresh at scale, in a process of their own
        vault = scale_vault(args.scale_notes, args.cache, args.corpora)
        print(json.dumps(await scale_first(vault, args.scale_child)))
        return
    if not (args.corpora / "tldr.jsonl.gz").exists():
        sys.exit(f"corpora not found at {args.corpora}: build them with benchmarks/corpora.py (or give --corpora)")
    args.cache.mkdir(parents=True, exist_ok=True)
    sources = {corpus: materialized(corpus, args.cache, args.corpora) for corpus in args.corpus}

    if cases & {"mirror", "churn"}:
        print("first refresh --all and the idle run after it; one change then refresh --all "
              f"(adds/deletes: the most of {args.trials} changes; own: median)")
        print("| corpus | capacity | latency | sources | packs | adds | wall s | own s | idle s | idle own s | "
              "idle mutating, gets | edited | inserted | deleted | renamed | own s per change |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for corpus, source in sources.items():
            for capacity in args.capacities:
                for latency in (0.0, args.latency):
                    with tempfile.TemporaryDirectory(dir=args.cache) as tmp:
                        r = await mirror_and_churn(source, Path(tmp), capacity, latency, args.trials,
                                                   "churn" in cases)
                    if "error" in r:
                        print(f"| {corpus} | {capacity} | {latency} | {r['error']} |")
                        continue
                    churn = r.get("churn", {})
                    cells = [f"{churn[k]['adds']}/{churn[k]['deletes']}" if k in churn else "" for k in CHURN]
                    owns = "/".join(f"{churn[k]['own']:.2f}" for k in CHURN) if churn else ""
                    print(f"| {corpus} | {capacity} | {latency:g} | {r['sources']} | {r['packs']} | {r['adds']} | "
                          f"{r['wall']:.2f} | {r['own']:.2f} | {r['idle_wall']:.2f} | {r['idle_own']:.2f} | "
                          f"{r['idle_mutating']}, {r['idle_gets']} | {' | '.join(cells)} | {owns} |", flush=True)
                    print(f"    fresh machine (no state file) over it: own {r['fresh_own']:.2f} s, "
                          f"{r['fresh_own'] / r['idle_own']:.2f}x the idle run's; calls {r['fresh_calls']}",
                          flush=True)
                    if churn:
                        print("    per change (adds, deletes):", {k: list(zip(churn[k]["adds_all"],
                                                                             churn[k]["deletes_all"], strict=True))
                                                                  for k in CHURN}, flush=True)

    if "citations" in cases:
        print(f"\n{args.questions} questions, each a line of a note, asked in a new conversation")
        print("| corpus | capacity | notebook | citations | mapped to a note holding the quote | heading right | "
              "quote in several notes of the pack | sources asked (mean) | adds paid |")
        print("|---|---|---|---|---|---|---|---|---|")
        for corpus, source in sources.items():
            questions = question_lines(source, args.questions)
            for capacity in args.capacities:
                with tempfile.TemporaryDirectory(dir=args.cache) as tmp:
                    results = await citations_case(source, Path(tmp), capacity, questions)
                for kind, f in results.items():
                    print(f"| {corpus} | {capacity} | {kind} | {f.citations:,} | {share(f.right_note, f.citations)} | "
                          f"{share(f.right_heading, f.citations)} | {f.ambiguous} | "
                          f"{statistics.mean(f.sources_asked):.1f} | {f.adds:,} |", flush=True)
                    for line in f.wrong:
                        print(f"    {kind}: {line}")

    if "fit" in cases:
        print(f"\nrefresh --all --dry-run at capacity {args.small_capacity}")
        for corpus, source in sources.items():
            with tempfile.TemporaryDirectory(dir=args.cache) as tmp:
                code, line = fit_case(source, Path(tmp), args.small_capacity)
            print(f"{corpus}: exit {code}: {line}")

    if "scale" in cases:
        vault = scale_vault(args.scale_notes, args.cache, args.corpora)
        with tempfile.TemporaryDirectory(dir=args.cache) as tmp:
            work = Path(tmp)
            first = scale_first_in_child(args.corpora, args.cache, args.scale_notes, work)
            idle = scale_idle(vault, work, first["notebook_id"], args.repeats)
        best = min(idle, key=lambda r: r["own"])
        print(f"\n{args.scale_notes:,} notes at capacity {SCALE_CAPACITY}")
        print("| figure | value |\n|---|---|")
        print(f"| first plan (`--dry-run`), own s | {first['plan_own']:.2f} |")
        print(f"| first `refresh --all`: own s, wall s | {first['first_own']:.2f}, {first['first_wall']:.2f} |")
        print(f"| sources, packs, notes alone, adds | {first['sources']}, {first['packs']}, {first['alone']}, "
              f"{first['adds']} |")
        print(f"| peak memory of that process, MB | {first['peak_mb']:.0f} |")
        print(f"| idle `refresh --all` command, own s (start-up included; best of {args.repeats}) | "
              f"{best['own']:.2f} (wall {best['wall']:.2f}, the fake {best['fake']:.2f}) |")
        print(f"| idle command, own CPU s (the process's CPU time less the fake's) | {best['own_cpu']:.2f} |")
        print(f"| idle: exit code, calls | {best['code']}, {best['calls']} |")
        print("    idle runs (own, wall, own CPU):",
              [(round(r["own"], 2), round(r["wall"], 2), round(r["own_cpu"], 2)) for r in idle])


if __name__ == "__main__":
    anyio.run(main)
