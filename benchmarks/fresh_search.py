"""Where a fresh `nlmsync search --json` spends its CPU time, against bm25s loading its index (run by hand).

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/fresh_search.py [--corpus tldr] [--runs 7]

The corpus is materialized as `search_peers.py` does (into `benchmarks/.cache/`), its nlmsync index is
built once into `benchmarks/.cache/<corpus>/fresh/state.db` and bm25s's saved index beside it. Then, in
one run so the machine's load is the same for all: the CPU time (user + system, all threads) of fresh
processes, best and median of `--runs` after an untimed one, interleaved:

- `nlmsync search --json QUERY` on the unchanged vault, and the library's search path alone;
- bm25s loading its saved index and answering the same query (the peer the command is compared with);
- each step of the command line's work timed in one process in the order it happens (imports as the
  command makes them, the vault's rescan, the cold answer's reads, check and ranking — `search/cold.py` —
  and the snippets' modules), with the bare interpreter's start and exit;
- the floors: a fresh process doing only what any nlmsync search must (every note's mtime and size is
  checked for edits made while nothing ran: a bare `os.scandir` + `stat` walk), and, for reference, what
  the search path does not load (numpy: the cold answer needs none; the pydantic settings model, without a
  config file), against bm25s's load and answer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_peers import CACHE, Bm25s, documents, materialize, throughput_queries

STEPS = r'''
import json, sys, time
from pathlib import Path
clock, r = time.process_time, {}
t = clock()
import nlmsync.cli
r["the CLI's modules"] = clock() - t; t = clock()
from nlmsync.config import search_settings
settings = search_settings(vault=Path(sys.argv[1]), env={})
r["the settings (the defaults: no pydantic)"] = clock() - t; t = clock()
import nlmsync.search.index
from nlmsync.search.cold import answer_cold, vault_unchanged
from nlmsync.search.query import STOP_WORDS, query_weights
from nlmsync.search import index_cache
from nlmsync.store.db import open_connection
from nlmsync.store.transaction import transaction
r["the search index's modules (no numpy)"] = clock() - t; t = clock()
db = open_connection(Path(sys.argv[2]))
index_cache.load_signature(db)
r["opening the state file"] = clock() - t; t = clock()
from nlmsync.vault.walk import list_vault
listing = list_vault(Path(sys.argv[1]))
r["the rescan: mtime and size of every note"] = clock() - t; t = clock()
with transaction(db):
    parts = index_cache.SnapshotParts.read(db)
    rows = index_cache.load_docs(db)
    r["reading the snapshot's notes"] = clock() - t; t = clock()
    assert vault_unchanged(parts, rows, listing)
    r["comparing the walk with them"] = clock() - t; t = clock()
    from nlmsync.search.bm25 import Weights
    answer_cold(parts, rows, query_weights(sys.argv[3]), 15, STOP_WORDS, Weights(), 1.2, 0.75)
    r["ranking: the query terms' postings read and scored"] = clock() - t; t = clock()
import regex, nlmsync.reading.snippets
r["regex and the snippets' module"] = clock() - t
print(json.dumps(r))
'''

# A bare walk: every `.md` file's stat through open folder descriptors, nothing kept (the rescan's floor).
BARE_WALK = r'''
import os, sys
def walk(fd):
    with os.scandir(fd) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                try:
                    walk(sub)
                finally:
                    os.close(sub)
            elif entry.name.endswith(".md"):
                entry.stat(follow_symlinks=False)
walk(os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY))
'''

FLOORS = {
    "numpy imported (what the cold answer does not pay)": "import numpy",
    "the settings model imported (pydantic; not on a plain search's path)": "import nlmsync.config.model",
    "a bare stat walk of the vault": BARE_WALK,
}

LIBRARY = ("from pathlib import Path\nfrom nlmsync.search.index import NoteIndex\n"
           "from nlmsync.store.db import open_connection\nimport sys\n"
           "print(NoteIndex(Path(sys.argv[1]), open_connection(Path(sys.argv[2]))).search(sys.argv[3], limit=10)[0].path)")


def build(corpus: str, workdir: Path) -> None:
    """nlmsync's index and bm25s's, each built in a process of its own when not there yet."""
    vault = materialize(corpus)
    state = workdir / "state.db"
    if not state.exists():
        code = ("import sys\nfrom pathlib import Path\nfrom nlmsync.config import Settings\n"
                "from nlmsync.search.index import NoteIndex\nfrom nlmsync.store.db import open_database\n"
                "v, s = Path(sys.argv[1]), Path(sys.argv[2])\n"
                "NoteIndex(v, open_database(s), Settings(vault=v, state=s)).sync()")
        subprocess.run([sys.executable, "-c", code, str(vault), str(state)], check=True)
    if not (workdir / "bm25s").exists():
        code = ("import sys\nfrom pathlib import Path\nfrom search_peers import Bm25s\n"
                "Bm25s(Path(sys.argv[1]), sys.argv[2], nlm=False).build()")
        subprocess.run([sys.executable, "-c", code, str(workdir), corpus], check=True,
                       cwd=Path(__file__).resolve().parent)


def cpu_of(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode:
        raise RuntimeError(f"{command[:3]} failed: {done.stderr.strip()[-300:]}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="tldr")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    workdir = CACHE / args.corpus / "fresh"
    workdir.mkdir(parents=True, exist_ok=True)
    build(args.corpus, workdir)
    vault, state = materialize(args.corpus), workdir / "state.db"
    query = throughput_queries(args.corpus, documents(args.corpus), 1)[0]
    bm25s = Bm25s(workdir, args.corpus, nlm=False)
    commands = {
        "nlmsync search --json": [str(Path(sys.executable).with_name("nlmsync")), "--vault", str(vault), "--state",
                                  str(state), "search", "--json", query],
        "nlmsync, library search path": [sys.executable, "-c", LIBRARY, str(vault), str(state), query],
        "bm25s load + query": [sys.executable, "-c", bm25s.first_result_code(query)],
    }
    commands.update({f"floor: {name}": [sys.executable, "-c", code, str(vault)] for name, code in FLOORS.items()})
    # as search_peers: the bytecode is written by the untimed run, the settings come from no environment
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE" and not k.startswith("NLMSYNC_")}
    times: dict[str, list[float]] = {name: [] for name in commands}
    steps: list[dict[str, float]] = []
    bare: list[float] = []
    for run in range(args.runs + 1):
        for name, command in commands.items():
            seconds, _ = cpu_of(command, env)
            if run:
                times[name].append(seconds)
        seconds, out = cpu_of([sys.executable, "-c", STEPS, str(vault), str(state), query], env)
        idle, _ = cpu_of([sys.executable, "-c", "pass"], env)
        if run:
            steps.append(json.loads(out))
            bare.append(idle)
    peer = min(times["bm25s load + query"])
    print(f"{args.corpus}, query {query!r}: CPU s of a fresh process, best (median) of {args.runs}\n")
    print("| process | CPU s | / bm25s |\n|---|---|---|")
    for name, values in times.items():
        values.sort()
        print(f"| {name} | {values[0]:.3f} ({values[len(values) // 2]:.3f}) | {values[0] / peer:.2f} |")
    print("\n| step of `nlmsync search --json` | CPU s |\n|---|---|")
    bare.sort()
    print(f"| interpreter start and exit | {bare[0]:.3f} ({bare[len(bare) // 2]:.3f}) |")
    for step in steps[0]:
        values = sorted(s[step] for s in steps)
        print(f"| {step} | {values[0]:.3f} ({values[len(values) // 2]:.3f}) |")


if __name__ == "__main__":
    main()
