"""The CPU time of a full index build, nlmsync against bm25s, in fresh processes taking turns (run by hand).

    .venv/bin/python benchmarks/build_cost.py [--corpus tldr] [--rounds 4] [--against NAME=SRC ...]

Each round builds the corpus once with each system in a new process, one after the other, so that the load
of a shared machine falls on all of them alike; `--against` adds builds by other nlmsync sources (a folder
holding the `nlmsync` package, e.g. another worktree's `src`, put first on PYTHONPATH), to compare code
before and after a change in one sitting. A build is timed as `search_peers.py` times it (its "build s"
column: CPU time of the process, reading the files, the imports and, for nlmsync, writing the state file
included); the vault is the one `search_peers.py` materializes in `benchmarks/.cache/`. Printed: every build,
then per system the best and median CPU seconds, the peak RSS and the ratios to bm25s, with the load average
before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def build_once(system: str, corpus: str) -> dict[str, float]:
    """Runs in its own process: one build, its CPU seconds and the process's peak RSS."""
    sys.path.insert(0, str(HERE))
    import search_peers

    with tempfile.TemporaryDirectory() as tmp:
        engine = search_peers.make_system(system, Path(tmp), corpus)
        started = time.process_time()
        engine.build()
        cpu = time.process_time() - started
    return {"cpu_s": cpu, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="tldr")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--against", action="append", default=[], metavar="NAME=SRC")
    parser.add_argument("--worker", nargs=2, metavar=("SYSTEM", "CORPUS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(build_once(*args.worker)))
        return
    sys.path.insert(0, str(HERE))
    import search_peers

    search_peers.materialize(args.corpus)
    runs: list[tuple[str, str, str | None]] = [("nlmsync", "nlmsync", None), ("bm25s", "bm25s", None)]
    for spec in args.against:
        name, _, src = spec.partition("=")
        runs.append((name, "nlmsync", str(Path(src).resolve())))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    results: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in runs}
    for round_ in range(args.rounds):
        for name, system, src in runs:
            env = dict(os.environ)
            if src is not None:
                env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
            done = subprocess.run([sys.executable, __file__, "--worker", system, args.corpus], env=env,
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                sys.exit(f"{name} failed: {done.stderr.strip()[-400:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            results[name].append(result)
            print(f"round {round_ + 1} {name}: {result['cpu_s']:.2f} s, {result['peak_mb']:.0f} MB", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    best_peer = min(r["cpu_s"] for r in results["bm25s"])
    median_peer = statistics.median(r["cpu_s"] for r in results["bm25s"])
    print("| system | best CPU s | median CPU s | / bm25s (best, median) | peak MB |\n|---|---|---|---|---|")
    for name, rows in results.items():
        best, median = min(r["cpu_s"] for r in rows), statistics.median(r["cpu_s"] for r in rows)
        print(f"| {name} | {best:.2f} | {median:.2f} | {best / best_peer:.2f}, {median / median_peer:.2f} | "
              f"{max(r['peak_mb'] for r in rows):.0f} |")


if __name__ == "__main__":
    main()
