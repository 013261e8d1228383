"""Mutation testing of one package of nlmsync with mutmut: how many small planted bugs its tests catch.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python tools/mutation.py store            # or notebooklm, sync, app, cli
    .venv/bin/python tools/mutation.py store --survivors   # and show each surviving mutant's diff
    .venv/bin/python tools/mutation.py sync/notes/decide   # only one module's (or subpackage's) mutants

Run by hand (or by a scheduled job), never by the tests or CI. The repository's tracked files are copied into
`.mutation/PACKAGE/` (kept between runs: mutmut then tests again only the functions that changed), the copy's
`[tool.mutmut]` section is narrowed to the package's source and to its tests (`TESTS`), and mutmut runs there at
a low priority (`nice -n 10`), with `--children` test processes at once. For each mutant mutmut runs only the
tests of that selection that executed the mutated function. The selection leaves out the tests marked slow (most
crash points of the crash loops, the end-to-end runs) unless `--slow` is given.

A target narrower than a package (`sync/carry`, `sync/notes/decide`) shares the package's copy, its mutants and its
tests, but checks and scores only the mutants of that subpackage or module: a large package is scored in pieces.
Each run checks only the mutants not checked yet; `--recheck` checks instead those that survived or that no test
reached, so that tests written since count.

The score is caught / (mutants − equivalent ones), a mutant being caught when a test failed on it or the tests
timed out on it, where a mutant counts as equivalent when `tests/mutation_equivalents.toml` names it with the
reason no test can tell it from the real code, or when it only changes the letter case of SQL text (mutmut upper-
and lower-cases strings; SQLite reads keywords and names in any case). Surviving
mutants that file does not name are listed: each wants a test, or a reason there.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "src" / "nlmsync"
EQUIVALENTS = REPO / "tests" / "mutation_equivalents.toml"
TESTS = {
    "store": ["tests/store", "tests/search"],
    "notebooklm": ["tests/notebooklm"],
    "sync": ["tests/sync", "tests/app"],
    "app": ["tests/app"],
    "cli": ["tests/cli"],
}
"""The tests each package's mutants are held to: its own; for store, search's too (the index's codec is store's,
its behaviour the index's); for sync, the app's, which reach it whole."""
RECHECKED = frozenset({"survived", "no tests"})
"""The results `--recheck` checks again: a test written since may change them."""
CAUGHT = frozenset({"killed", "timeout"})
"""A mutant is caught when a test failed on it, or when the tests ran past their time (it hangs the code)."""
_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+): (.+)$")
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|FROM|VALUES|ORDER BY|JOIN|LIMIT|SET)\b")
SQL_PACKAGES = frozenset({"store"})
"""The packages that hold SQL text (the letter case of which a mutant may change)."""
SQL_LETTER_CASE = "SQLite reads SQL keywords and the names of tables and columns in any letter case"


def target_parts(target: str) -> tuple[str, str]:
    """The package a target lies in, and the prefix of the names of the mutants it holds: `sync/notes/decide`
    (or `sync/notes/decide.py`, `sync.notes.decide`) gives `sync` and `nlmsync.sync.notes.decide.`."""
    dotted = target.removesuffix(".py").replace("/", ".").strip(".")
    package = dotted.split(".", 1)[0]
    if package not in TESTS:
        raise SystemExit(f"{target}: not a package of nlmsync or a part of one (packages: {', '.join(sorted(TESTS))})")
    path = SOURCE.joinpath(*dotted.split("."))
    if not (path.is_dir() or path.with_suffix(".py").is_file()):
        raise SystemExit(f"{target}: no such module or subpackage in {SOURCE.relative_to(REPO)}")
    return package, f"nlmsync.{dotted}."


def copy_repository(target: Path) -> None:
    """The tracked files of the working tree, as they are now, written over `target` (its `mutants/` kept)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    for name in listed.decode().split("\0"):
        source = REPO / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def narrow_config(pyproject: Path, package: str, tests: list[str]) -> None:
    """`[tool.mutmut]` of the copy's pyproject.toml, set to mutate `package` and to hold it to `tests` (pytest's
    words: folders, and options that choose among their tests)."""
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.mutmut]" not in text:
        raise SystemExit(f"{pyproject}: no [tool.mutmut] section")
    lines = [f'only_mutate = ["src/nlmsync/{package}/*"]',
             f"pytest_add_cli_args_test_selection = {tests!r}".replace("'", '"')]
    pyproject.write_text(text.replace("[tool.mutmut]", "[tool.mutmut]\n" + "\n".join(lines), 1), encoding="utf-8")


def equivalents(prefix: str) -> dict[str, str]:
    """The mutants whose names begin with `prefix` that the equivalents file names, with the reason each is
    equivalent."""
    with EQUIVALENTS.open("rb") as handle:
        named: dict[str, str] = tomllib.load(handle).get("equivalent", {})
    return {name: why for name, why in named.items() if name.startswith(prefix)}


def to_check(statuses: dict[str, str], prefix: str, recheck: bool) -> list[str]:
    """What `mutmut run` is given to check the target's mutants: the names of those not checked yet (with
    `recheck`, of those that survived or that no test reached instead), or, before the package's mutants exist, a
    pattern naming them all. An empty list means nothing is left to check."""
    mine = {name: status for name, status in statuses.items() if name.startswith(prefix)}
    if not mine:
        return [f"{prefix}*"]
    wanted = RECHECKED if recheck else {"not checked"}
    return sorted(name for name, status in mine.items() if status in wanted)


def results(work: Path) -> dict[str, str]:
    """Every mutant of the last run with its status (killed, survived, timeout, no tests, …)."""
    listed = subprocess.run([_mutmut(), "results", "--all", "true"], cwd=work, check=True, capture_output=True,
                            text=True).stdout
    return {m.group(1): m.group(2).strip() for m in map(_RESULT.match, listed.splitlines()) if m}


def diff_lines(work: Path, name: str) -> tuple[list[str], list[str]]:
    """The lines mutant `name` takes out of the code, and those it puts in."""
    shown = subprocess.run([_mutmut(), "show", name], cwd=work, capture_output=True, text=True).stdout
    lines = shown.splitlines()
    return ([line[1:] for line in lines if line.startswith("-") and not line.startswith("---")],
            [line[1:] for line in lines if line.startswith("+") and not line.startswith("+++")])


def sql_letter_case(removed: list[str], added: list[str]) -> bool:
    """Whether a mutant changes only the letter case of SQL text, outside any quoted SQL string: a change SQLite
    does not see (mutmut upper- and lower-cases every string it finds)."""
    if len(removed) != len(added) or not removed or removed == added:
        return False
    for old, new in zip(removed, added, strict=True):
        if old.casefold() != new.casefold():
            return False
        changed = [a for a, b in zip(old, new, strict=True) if a != b]
        quoted = "'" in old[old.find('"'):]  # an SQL string literal in the text: its letter case counts
        if changed and (quoted or not _SQL.search(old.upper())):
            return False
    return True


def _mutmut() -> str:
    found = shutil.which("mutmut", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("mutmut is not installed: pip install -e '.[test,mutation]'")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("targets", nargs="+", metavar="target",
                        help="a package (" + ", ".join(sorted(TESTS)) + "), or subpackages or modules of one, as "
                        "paths under src/nlmsync: sync/carry sync/notes/decide")
    parser.add_argument("--children", type=int, default=1, help="test processes at once (default: %(default)s)")
    parser.add_argument("--slow", action="store_true", help="hold the mutants to the slow tests too")
    parser.add_argument("--report", action="store_true", help="report the last run's results without running")
    parser.add_argument("--recheck", action="store_true",
                        help="check again only the mutants that survived or that no test reached")
    parser.add_argument("--survivors", action="store_true", help="show the diff of each unexplained survivor")
    args = parser.parse_args()
    parts = [target_parts(target) for target in args.targets]
    package = parts[0][0]
    if any(other != package for other, _ in parts):
        raise SystemExit(f"{' '.join(args.targets)}: targets of more than one package; score one package at a time")
    prefixes = tuple(prefix for _, prefix in parts)
    work = REPO / ".mutation" / package
    statuses = results(work) if (work / "mutants").is_dir() else {}
    whole = prefixes == (f"nlmsync.{package}.",) and not args.recheck
    names = [name for prefix in prefixes for name in to_check(statuses, prefix, args.recheck)]
    if not args.report and (whole or names):
        work.mkdir(parents=True, exist_ok=True)
        copy_repository(work)
        narrow_config(work / "pyproject.toml", package, [*([] if args.slow else ["-m", "not slow"]),
                                                         *TESTS[package]])
        log = work / "mutmut.log"
        with log.open("w", encoding="utf-8") as output:
            run = subprocess.run(["nice", "-n", "10", _mutmut(), "run", "--max-children", str(args.children),
                                  *([] if whole else names)], cwd=work, stdout=output, stderr=subprocess.STDOUT,
                                 env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        if run.returncode:
            raise SystemExit(f"mutmut run failed (exit {run.returncode}); its output is in {log}")
        statuses = results(work)
    statuses = {name: status for name, status in statuses.items() if name.startswith(prefixes)}
    known = {name: why for prefix in prefixes for name, why in equivalents(prefix).items()}
    for name in sorted(n for n, status in statuses.items() if status == "survived" and n not in known):
        if package in SQL_PACKAGES and sql_letter_case(*diff_lines(work, name)):
            known[name] = SQL_LETTER_CASE
    counted = {name: status for name, status in statuses.items() if name not in known and status != "not checked"}
    unchecked = sum(status == "not checked" for status in statuses.values())
    killed = sum(status in CAUGHT for status in counted.values())
    left = sorted(name for name, status in counted.items() if status not in CAUGHT)
    stale = sorted(name for name, why in known.items() if statuses.get(name) != "survived" and why != SQL_LETTER_CASE)
    score = killed / len(counted) if counted else 1.0
    print(f"{' '.join(args.targets)}: {len(statuses)} mutants, {len(known)} equivalent, "
          f"{killed} of {len(counted)} caught: {score:.1%}" + (f" ({unchecked} not checked yet: run again to go on)" if unchecked else ""))
    for name in left:
        print(f"  {counted[name]}: {name}")
        if args.survivors:
            shown = subprocess.run([_mutmut(), "show", name], cwd=work, capture_output=True, text=True).stdout
            print("    " + shown.replace("\n", "\n    "))
    for name in stale:
        print(f"  named equivalent, but {statuses.get(name, 'no longer a mutant')}: {name}")


if __name__ == "__main__":
    main()
