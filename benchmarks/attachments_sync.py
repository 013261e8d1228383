"""Benchmark: a vault of notes and PDFs synced to the fake NotebookLM in process (run by hand, never in CI).

    .venv/bin/python benchmarks/attachments_sync.py [--pdfs 300] [--scanned 10] [--notes 300] [--repeats 3]
        [--rounds 3]

The vault: `--notes` notes (as `benchmarks/sync.py` writes them) and `--pdfs` PDFs typeset by reportlab (the bench
extra) from the Cranfield abstracts of the benchmark corpora (`benchmarks/corpora.py`), four abstracts a file, of
which `--scanned` hold drawings only (no text layer, as scanned pages). Measured, each in a fresh state file:

- pypdfium2's own extraction of every page of the same PDFs, in this process (wall time): the floor, measured
  again beside each measure it is compared with (the machine is shared: figures of one round are compared);
- the first `index` (the search index built, every PDF's text read in nlmsync's reading processes) and the first
  `refresh --all` on a fresh state file (every file hashed, every PDF read before it is uploaded), nlmsync's own
  time (wall time less the time inside server calls: the fake reads each uploaded file too, as NotebookLM does):
  what the PDFs add to the same run over the notes alone (`attachments = "none"`), against that floor; `--rounds`
  rounds of both, the median ratio and its range. For the index, its CPU time too (nlmsync's process and its
  reading processes) against the floor's: what the PDFs cost whether or not a core was free to overlap the work;
- the idle `refresh --all` (nothing changed) against the idle run of the same notes with `attachments = "none"` in a
  state file of its own: `--repeats` triples run in turn, the median of their ratios; the third of each triple is
  the idle run of a vault of as many notes as the first holds notes and PDFs, so that what a PDF adds to an idle run
  is set against what a note adds;
- the idle `nlmsync refresh --all` as a user runs it, a process of its own (start-up, the connection to the
  server and the fake's reading of its state file included), against the same command with `attachments = "none"`
  (a state file and a fake state of its own): `--repeats` alternated pairs, wall and CPU time, the median of their
  ratios;
- one PDF changed: its calls (one upload and one delete are the target).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpora import CORPORA  # noqa: E402
from sync import Run, fastest, timed_command, write_vault  # noqa: E402

from nlmsync.config import Settings  # noqa: E402
from nlmsync.fake.state import FakeNotebookLM  # noqa: E402
from nlmsync.search import NoteIndex  # noqa: E402
from nlmsync.store import open_database  # noqa: E402

PER_FILE = 4


def write_pdfs(folder: Path, count: int, scanned: int) -> list[Path]:
    """`count` PDFs of Cranfield abstracts, the last `scanned` of them drawings only."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.pdfgen import canvas
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    records = [json.loads(line) for line in (CORPORA / "cranfield" / "corpus.jsonl").open(encoding="utf-8")]
    folder.mkdir(parents=True, exist_ok=True)
    made = []
    for number in range(count):
        path = folder / f"{number // 50:02}" / f"paper-{number:03}.pdf"
        path.parent.mkdir(parents=True, exist_ok=True)
        if number >= count - scanned:
            page = canvas.Canvas(str(path))
            for line in range(40):
                page.rect(72, 72 + line * 16, 400 - (line * 37 + number) % 300, 10, fill=1)
            page.save()
        else:
            chunk = [records[(number * PER_FILE + k) % len(records)] for k in range(PER_FILE)]
            story = []
            for record in chunk:
                text = (record.get("text") or "").replace("&", "&amp;").replace("<", "&lt;")
                story += [Paragraph(f"Paper {number}: {record.get('title') or ''}".replace("&", "&amp;"),
                                    styles["Heading2"]), Paragraph(text, styles["BodyText"])]
            SimpleDocTemplate(str(path)).build(story)
        made.append(path)
    return made


def cpu_seconds() -> float:
    """CPU time of this process and of its child processes that ended (the reading processes of an index)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def library_extraction(paths: list[Path]) -> float:
    """pypdfium2 extracting every page of `paths` in this process: wall seconds."""
    import pypdfium2

    start = time.perf_counter()
    for path in paths:
        document = pypdfium2.PdfDocument(str(path))
        for index in range(len(document)):
            page = document[index]
            text = page.get_textpage()
            text.get_text_range()
            text.close()
            page.close()
        document.close()
    return time.perf_counter() - start


def run_for(root: Path, vault: Path, name: str, count: int, **settings: Any) -> Run:
    fake = FakeNotebookLM(capacity=count + 50)
    notebook_id = fake.apply("notebook_create", {"title": name})["notebook_id"]
    values = {"vault": vault, "state": root / f"{name}.db", "notebook": notebook_id, "capacity": count + 50,
              **settings}
    return Run(fake, Settings(**values))


def first_index(root: Path, vault: Path, name: str, **settings: Any) -> tuple[float, float]:
    """A first `index` of the vault into a state file of its own: wall seconds, and CPU seconds of this process and
    of the reading processes it ran."""
    start, cpu = time.perf_counter(), cpu_seconds()
    index = NoteIndex(vault, open_database(root / f"{name}.db"), Settings(vault=vault, state=root / f"{name}.db",
                                                                          **settings))
    index.sync()
    return time.perf_counter() - start, cpu_seconds() - cpu


async def refresh_all(orch: Any) -> Any:
    """`refresh --all`: every file becomes a source (the fake processes the PDFs without text, as NotebookLM reads
    scanned pages itself), so a failure stops the benchmark."""
    return await orch.refresh(all_notes=True)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=int, default=300)
    parser.add_argument("--scanned", type=int, default=10)
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        vault = root / "vault"
        write_vault(vault, args.notes)
        pdfs = write_pdfs(vault / "papers", args.pdfs, args.scanned)
        total = args.notes + args.pdfs
        print(f"{args.notes} notes, {args.pdfs} PDFs ({args.scanned} without text), "
              f"{sum(p.stat().st_size for p in pdfs) / 1e6:.1f} MB")
        index_ratios, refresh_ratios, cpu_ratios = [], [], []
        for round_ in range(args.rounds):  # each first run in a fresh state file (and notebook): the median ratio
            cpu = cpu_seconds()
            floor = library_extraction(pdfs)
            floor_cpu = cpu_seconds() - cpu
            built, built_cpu = first_index(root, vault, f"index-{round_}")
            built_notes, notes_cpu = first_index(root, vault, f"index-notes-{round_}", attachments="none")
            index_ratios.append((built - built_notes) / floor)
            cpu_ratios.append((built_cpu - notes_cpu) / floor_cpu)
            print(f"  round {round_ + 1}: pypdfium2's own extraction {floor:.2f} s ({floor_cpu:.2f} s CPU); first "
                  f"index {built:.2f} s, of the notes alone {built_notes:.2f} s: the PDFs cost "
                  f"{built - built_notes:.2f} s ({index_ratios[-1]:.2f}×), {built_cpu - notes_cpu:.2f} s CPU "
                  f"({cpu_ratios[-1]:.2f}×)")
            floor = library_extraction(pdfs)
            both = run_for(root, vault, f"both-{round_}", total)
            first = await both.timed(refresh_all)
            notes_only = run_for(root, vault, f"notes-{round_}", total, attachments="none")
            first_notes = await notes_only.timed(refresh_all)
            extra = first["own"] - first_notes["own"]
            refresh_ratios.append(extra / floor)
            print(f"  round {round_ + 1}: pypdfium2's own extraction {floor:.2f} s; first refresh --all own "
                  f"{first['own']:.2f} s, of the notes alone {first_notes['own']:.2f} s: the PDFs cost {extra:.2f} s "
                  f"({refresh_ratios[-1]:.2f}×); wall {first['wall']:.2f} s, {first['adds']:.0f} adds, "
                  f"{first['mutating'] - first['adds']:.0f} other mutating calls, "
                  f"{len(both.fake.notebooks[both.settings.notebook].sources)} sources")
            if round_ < args.rounds - 1:  # the fakes' reading processes end here, not inside the next index's time
                both.fake.close()
                notes_only.fake.close()
        for what, ratios in (("first index", index_ratios), ("first index, CPU time", cpu_ratios),
                             ("first refresh --all", refresh_ratios)):
            print(f"{what}: the PDFs cost {statistics.median(ratios):.2f}× pypdfium2's own extraction (median of "
                  f"{args.rounds} rounds, {min(ratios):.2f}× to {max(ratios):.2f}×)")

        as_many = root / "as-many"  # a vault of notes only, as many as the notes and PDFs: what a PDF costs as a note
        write_vault(as_many, total)
        notes_instead = run_for(root, as_many, "as-many", total)
        await notes_instead.timed(refresh_all)
        for run in (both, notes_only, notes_instead):  # the run after the first records the hashes by mtime and size
            await run.timed(refresh_all)
        triples = []  # alternated, so a drift of the shared machine's speed falls on each side of a triple alike
        for _ in range(args.repeats):
            triples.append((await both.timed(refresh_all), await notes_only.timed(refresh_all),
                            await notes_instead.timed(refresh_all)))
        idle, idle_notes = fastest([a for a, _, _ in triples]), fastest([b for _, b, _ in triples])
        own_ratios = [a["own"] / b["own"] for a, b, _ in triples]
        print(f"idle refresh --all: {idle['wall']:.3f} s wall, {idle['own']:.3f} s own, {idle['mutating']:.0f} "
              f"mutating calls; notes only {idle_notes['wall']:.3f} s wall, {idle_notes['own']:.3f} s own (fastest "
              f"of {args.repeats}) → own time {statistics.median(own_ratios):.2f}× the notes alone (median of "
              f"{args.repeats} alternated triples, {min(own_ratios):.2f}× to {max(own_ratios):.2f}×)")
        per_file = statistics.median([(a["own"] - b["own"]) / args.pdfs for a, b, _ in triples])
        per_note = statistics.median([(c["own"] - b["own"]) / args.pdfs for _, b, c in triples])
        print(f"idle refresh --all, what one more source costs: a PDF {per_file * 1e6:.0f} µs, a note "
              f"{per_note * 1e6:.0f} µs (the vault against {total} notes alone; medians of the same triples)")

        commands = {}  # the idle command as a user runs it: a process of its own, start-up included
        for name, env in (("both", {}), ("notes", {"NLMSYNC_ATTACHMENTS": "none"})):
            server = f"fake --capacity {total + 50} --state {root / f'cli-{name}.json'}"
            command = [sys.executable, "-m", "nlmsync", "--vault", str(vault), "--state", str(root / f"cli-{name}.db"),
                       "--server", server, "refresh", "--all", "-q"]
            environment = {**os.environ, "NLMSYNC_CAPACITY": str(total + 50), **env}
            timed_command([*command, "--notebook", f"new:{name}"], environment, f"first {name}")
            timed_command(command, environment, f"recording {name}")
            commands[name] = command, environment
        pairs = [(timed_command(*commands["both"], "idle"), timed_command(*commands["notes"], "idle notes"))
                 for _ in range(args.repeats)]
        for what, index in (("wall", 0), ("CPU", 1)):
            ratios = [a[index] / b[index] for a, b in pairs]
            print(f"idle `nlmsync refresh --all -q` (a process of its own): {what} time "
                  f"{statistics.median([a[index] for a, _ in pairs]):.2f} s, notes only "
                  f"{statistics.median([b[index] for _, b in pairs]):.2f} s → {statistics.median(ratios):.2f}× (median "
                  f"of {args.repeats} alternated pairs, {min(ratios):.2f}× to {max(ratios):.2f}×)")

        changed = pdfs[0]
        changed.write_bytes(changed.read_bytes() + b"\n% edited\n")  # other bytes, the same text
        mark = len(both.fake.calls)
        one = await both.timed(refresh_all)
        tools = [c.tool for c in both.fake.calls[mark:] if c.tool in ("source_add", "source_delete",
                                                                       "source_rename")]
        print(f"one PDF changed: {one['wall']:.3f} s wall, calls {tools}")


if __name__ == "__main__":
    anyio.run(main)
