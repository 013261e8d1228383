"""Large-note benchmark (run by hand, never in CI): memory and time of one huge note against ordinary ones.

A note of N MB is made by repeating the fixture vault's notes (headings, lists, code, prose, CJK) one
after another. For each size it measures, in a fresh interpreter so peaks do not mix:

- index: `NoteIndex.sync()` of a vault holding only that note — tracemalloc peak (Python allocations)
  as a multiple of the note's size, and seconds per MB;
- search: a query through the index plus the snippet `nlmsync search` prints for the note;
- read_note: the chunk plan and a query read (`search/reading.py`), as `serve` does.

The peer is the same work on the ordinary fixture notes one by one (the per-byte rate of ordinary
notes); the ratio `large s/MB : ordinary s/MB` should stay near 1 for a linear indexer.

usage: .venv/bin/python benchmarks/large_note.py [--sizes 1,4,16] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURE_VAULT = REPO / "fixtures" / "vault"
QUERY = "heapsort worst case recursion depth"


def ordinary_notes() -> list[str]:
    texts = []
    for path in sorted(FIXTURE_VAULT.rglob("*.md")):
        if ".obsidian" in path.parts or "quirks" in path.parts:
            continue
        texts.append(path.read_text(encoding="utf-8"))
    return texts


def make_note(megabytes: float) -> str:
    target = int(megabytes * 1_000_000)
    notes = ordinary_notes()
    parts: list[str] = []
    size = 0
    i = 0
    while size < target:
        text = notes[i % len(notes)]
        text = text.split("\n---\n", 1)[-1] if text.startswith("---") else text  # front matter only once
        parts.append(f"\n\n## Part {i}\n\n{text}")
        size += len(parts[-1].encode("utf-8"))
        i += 1
    return "".join(parts)


def measure(kind: str, megabytes: float) -> dict[str, float]:
    """One measurement in this process (called in a child)."""
    from nlmsync.config import Settings
    from nlmsync.reading.note import plan_chunks, read_note
    from nlmsync.reading.snippets import extract_snippet
    from nlmsync.search.index import NoteIndex
    from nlmsync.vault import read_note_text

    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp)
        if kind == "ordinary":  # about as many bytes in ordinary notes (copies of the fixture notes)
            notes = ordinary_notes()
            written = i = 0
            while written < megabytes * 1_000_000:
                text = notes[i % len(notes)]
                (vault / f"n{i}.md").write_text(text, encoding="utf-8")
                written += len(text.encode("utf-8"))
                i += 1
        else:
            (vault / "big.md").write_text(make_note(megabytes), encoding="utf-8")
        size = sum(p.stat().st_size for p in vault.glob("*.md"))
        NoteIndex(vault).sync()  # imports and first-use compilations are not the note's cost
        settings = Settings(vault=vault)
        result: dict[str, float] = {"bytes": size}
        for traced in (False, True):  # times without tracemalloc (it slows allocation down), then peaks
            if traced:
                tracemalloc.start()
            index = NoteIndex(vault)
            started = time.perf_counter()
            index.sync()
            result["index_s" if not traced else "index_peak"] = time.perf_counter() - started
            if traced:
                result["index_peak"] = tracemalloc.get_traced_memory()[1]
                tracemalloc.reset_peak()
            started = time.perf_counter()
            hits = index.search(QUERY, limit=10)
            for hit in hits[:3]:
                extract_snippet(read_note_text(vault, hit.path), QUERY, 300)
            result["search_s" if not traced else "search_peak"] = time.perf_counter() - started
            if traced:
                result["search_peak"] = tracemalloc.get_traced_memory()[1]
                tracemalloc.reset_peak()
            started = time.perf_counter()
            if kind == "large":
                text = read_note_text(vault, "big.md")
                read_note("big.md", text, settings, query=QUERY, plan=plan_chunks(text, settings))
                del text
            result["read_s" if not traced else "read_peak"] = time.perf_counter() - started
            if traced:
                result["read_peak"] = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            del index
    return result


def run_child(kind: str, megabytes: float) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", kind, str(megabytes)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1,4,16")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], float(args.child[1]))))
        return
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        r = run_child("ordinary", 2)
        best = r if not best or r["index_s"] < best["index_s"] else best
    ordinary_rate = best["index_s"] / (best["bytes"] / 1e6)
    print(f"ordinary notes: {best['bytes'] / 1e6:.2f} MB, index {ordinary_rate:.2f} s/MB (best of {args.repeat})")
    print(f"{'size MB':>8} {'index s':>8} {'s/MB':>6} {'vs ord':>6} {'peak/size':>9} "
          f"{'search s':>8} {'peak/size':>9} {'read s':>7} {'peak/size':>9}")
    for megabytes in (float(s) for s in args.sizes.split(",")):
        runs = [run_child("large", megabytes) for _ in range(args.repeat)]
        r = min(runs, key=lambda x: x["index_s"])
        mb = r["bytes"] / 1e6
        print(f"{mb:8.1f} {r['index_s']:8.2f} {r['index_s'] / mb:6.2f} {r['index_s'] / mb / ordinary_rate:6.2f} "
              f"{r['index_peak'] / r['bytes']:9.2f} {min(x['search_s'] for x in runs):8.2f} "
              f"{r['search_peak'] / r['bytes']:9.2f} {min(x['read_s'] for x in runs):7.2f} "
              f"{r['read_peak'] / r['bytes']:9.2f}")


if __name__ == "__main__":
    main()
