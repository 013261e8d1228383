"""What `--server fake` costs a command: the in-process fake against the stdio one (`fake-stdio`), run by hand.

Each round runs `nlmsync status --json` and `nlmsync ask --json` on a copy of `fixtures/vault` (already synced
by a first refresh) once with each spec, alternating, in fresh processes as a user or a CI job runs them.
Prints the best wall time and the best CPU time (the command's process and its children: the stdio fake is a
child) of each, and the ratio stdio / in-process. The machine is shared: read the ratios, best of N.

usage: .venv/bin/python benchmarks/fake_transport.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SPECS = ("fake", "fake-stdio")
COMMANDS = {"status": ["status", "--json"], "ask": ["ask", "--json", "How does heapsort work?"]}


def timed(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the process and everything it waited for) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "nlmsync", *args], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args().rounds
    env = {k: v for k, v in os.environ.items() if not k.startswith("NLMSYNC_")}
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(ROOT / "fixtures" / "vault", vault, symlinks=True, ignore=shutil.ignore_patterns(".nlmsync"))
        common = ["--vault", str(vault), "--notebook", "new:Bench"]
        subprocess.run([sys.executable, "-m", "nlmsync", *common, "--server", "fake", "refresh", "--json",
                        "algorithms"], env=env, check=True, stdout=subprocess.DEVNULL)
        best: dict[tuple[str, str], tuple[float, float]] = {}
        for _ in range(rounds):
            for name, command in COMMANDS.items():
                for spec in SPECS:
                    wall, cpu = timed([*common, "--server", spec, *command], env)
                    old = best.get((name, spec), (float("inf"), float("inf")))
                    best[(name, spec)] = (min(old[0], wall), min(old[1], cpu))
    print(f"best of {rounds}     | fake wall s | fake CPU s | fake-stdio wall s | fake-stdio CPU s | "
          "stdio / in-process (wall, CPU)")
    for name in COMMANDS:
        (w1, c1), (w2, c2) = best[(name, "fake")], best[(name, "fake-stdio")]
        print(f"{name:<14} | {w1:11.2f} | {c1:10.2f} | {w2:17.2f} | {c2:16.2f} | {w2 / w1:.2f}, {c2 / c1:.2f}")


if __name__ == "__main__":
    main()
