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
reached, so that tests written since count, after tracing again which tests reach each function (mutmut traces
them once, and later only the tests added since: a function written after that is linked to none of the older tests
that reach it).

The score is caught / (mutants − equivalent ones), a mutant being caught when a test failed on it or the tests
timed out on it, where a mutant counts as equivalent when `tests/mutation_equivalents.toml` names it with the
reason no test can tell it from the real code, or when it only changes the letter case of SQL text (mutmut upper-
and lower-cases strings; SQLite reads keywords and names in any case). Surviving
mutants that file does not name are listed: each wants a test, or a reason there. mutmut switches a mutant on
only inside the tests, so a mutant of code that runs while modules are imported (a decorator's arguments, a command
registered with its group) always survives: the file's `at_import` table names such mutants with the test that
fails when the mutant's change is made in the source by hand, and they count as caught.

A whole package takes hours to check on a small machine; `--sample N` checks instead a uniform random sample of N of
the target's mutants (drawn with `--seed`, so the same seed draws the same sample of the same code) and scores it
with a 95% Wilson interval: the range of package scores that a sample scoring this would come from 95 times in 100.
"""

from __future__ import annotations

import argparse
import math
import os
import random
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
CAUGHT = frozenset({"killed", "timeout", "caught by hand"})
"""A mutant is caught when a test failed on it, or when the tests ran past their time (it hangs the code), or,
for code that runs while modules are imported, when the equivalents file names the test that fails on it."""
_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+): (.+)$")
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|FROM|VALUES|ORDER BY|JOIN|LIMIT|SET)\b")
SQL_PACKAGES = frozenset({"store"})
"""The packages that hold SQL text (the letter case of which a mutant may change)."""
SEED = 44
"""The seed `--sample` draws with unless told another: the same sample each run, so results carry over."""
Z_95 = 1.959964
"""The normal quantile of a two-sided 95% interval."""
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
    """The tracked files of the working tree, as they are now, written over `target` (its `mutants/` kept), and
    the Python files of an earlier copy that the tree no longer has removed from it and from `mutants/` (a module
    moved away would otherwise still be found there by the tests)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, check=True, capture_output=True).stdout
    names = {name for name in listed.decode().split("\0") if name and (REPO / name).is_file()}
    for name in names:
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, target / name)
    for copy in (target, target / "mutants"):
        for folder in ("src", "tests"):
            for stale in sorted((copy / folder).rglob("*.py")):
                if stale.relative_to(copy).as_posix() not in names:
                    for left in (stale, *stale.parent.glob(f"{stale.name}.*")):  # mutmut's .meta and .spans beside it
                        left.unlink()


def narrow_config(pyproject: Path, package: str, tests: list[str]) -> None:
    """`[tool.mutmut]` of the copy's pyproject.toml, set to mutate `package` and to hold it to `tests` (pytest's
    words: folders, and options that choose among their tests)."""
    text = pyproject.read_text(encoding="utf-8")
    if "[tool.mutmut]" not in text:
        raise SystemExit(f"{pyproject}: no [tool.mutmut] section")
    lines = [f'only_mutate = ["src/nlmsync/{package}/*"]',
             f"pytest_add_cli_args_test_selection = {tests!r}".replace("'", '"')]
    pyproject.write_text(text.replace("[tool.mutmut]", "[tool.mutmut]\n" + "\n".join(lines), 1), encoding="utf-8")


def equivalents(prefix: str, table: str = "equivalent") -> dict[str, str]:
    """The mutants whose names begin with `prefix` that a table of the equivalents file names: `equivalent`,
    with the reason each is equivalent; `at_import`, with the test that fails on each."""
    with EQUIVALENTS.open("rb") as handle:
        named: dict[str, str] = tomllib.load(handle).get(table, {})
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


def sample(names: list[str] | set[str] | dict[str, str], size: int, seed: int) -> list[str]:
    """A uniform random sample of `size` of `names` (all of them when there are fewer), sorted; the same names,
    size and seed give the same sample, whatever order the names come in."""
    ordered = sorted(names)
    return sorted(random.Random(seed).sample(ordered, min(size, len(ordered))))


def wilson(caught: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of the share caught / total (95% for the default `z`): unlike the plain
    share ± z·σ it stays within 0..1 and holds its coverage near 100%, where mutation scores lie."""
    if total <= 0:
        return 0.0, 1.0
    share = caught / total
    centre = (share + z * z / (2 * total)) / (1 + z * z / total)
    half = z / (1 + z * z / total) * math.sqrt(share * (1 - share) / total + z * z / (4 * total * total))
    return max(0.0, centre - half), min(1.0, centre + half)


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


def check(work: Path, package: str, names: list[str], slow: bool, children: int) -> int:
    """mutmut run in the package's copy (refreshed from the working tree first) over the mutants `names` (all of
    the package's when empty); its exit code."""
    work.mkdir(parents=True, exist_ok=True)
    copy_repository(work)
    narrow_config(work / "pyproject.toml", package, [*([] if slow else ["-m", "not slow"]), *TESTS[package]])
    with (work / "mutmut.log").open("w", encoding="utf-8") as output:
        return subprocess.run(["nice", "-n", "10", _mutmut(), "run", "--max-children", str(children), *names],
                              cwd=work, stdout=output, stderr=subprocess.STDOUT,
                              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}).returncode


def _failed(work: Path, code: int) -> SystemExit:
    return SystemExit(f"mutmut run failed (exit {code}); its output is in {work / 'mutmut.log'}")


def sampled(work: Path, package: str, prefixes: tuple[str, ...], args: argparse.Namespace) -> dict[str, str]:
    """The statuses of the sample of the target's mutants, after checking those of its mutants not checked yet
    (with `--recheck`, those that survived or that no test reached too). The sample is drawn from the mutants of the
    code as it is now: when a run finds functions changed (their mutants made anew), it is drawn again, and its
    new members are checked."""
    statuses = results(work) if (work / "mutants").is_dir() else {}
    if not any(name.startswith(prefixes) for name in statuses) and not args.report:
        # No mutants yet: a run naming a mutant that cannot exist makes them all, traces which tests reach each
        # function, and stops (mutmut then finds nothing of that name to check: an exit code that is expected).
        check(work, package, [f"{prefixes[0]}x_no_such_function__mutmut_0"], args.slow, args.children)
        statuses = results(work) if (work / "mutants").is_dir() else {}
        if not any(name.startswith(prefixes) for name in statuses):
            raise SystemExit(f"no mutants made; mutmut's output is in {work / 'mutmut.log'}")
    wanted = RECHECKED | {"not checked"} if args.recheck else {"not checked"}  # a sample is scored whole
    done: set[str] = set()
    while True:
        chosen = sample([name for name in statuses if name.startswith(prefixes)], args.sample, args.seed)
        names = [name for name in chosen if statuses[name] in wanted and name not in done]
        if args.report or not names:
            return {name: statuses[name] for name in chosen}
        code = check(work, package, names, args.slow, args.children)
        if code:
            raise _failed(work, code)
        done.update(names)
        statuses = results(work)


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
    parser.add_argument("--sample", type=int, metavar="N",
                        help="check and score only a uniform random sample of N of the target's mutants, with a "
                        "95%% interval for the score of them all")
    parser.add_argument("--seed", type=int, default=SEED,
                        help="the seed the sample is drawn with (default: %(default)s)")
    args = parser.parse_args()
    if args.sample is not None and args.sample < 1:
        raise SystemExit(f"--sample {args.sample}: give a number of mutants, 1 or more")
    parts = [target_parts(target) for target in args.targets]
    package = parts[0][0]
    if any(other != package for other, _ in parts):
        raise SystemExit(f"{' '.join(args.targets)}: targets of more than one package; score one package at a time")
    prefixes = tuple(prefix for _, prefix in parts)
    work = REPO / ".mutation" / package
    if args.recheck and not args.report:
        # mutmut traces which tests reach each function once, and later only the tests added since: a function
        # written after that is linked to none of the older tests that reach it, and its mutants survive unseen
        # by them. A recheck has every test traced again first.
        (work / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    if args.sample is not None:
        statuses = sampled(work, package, prefixes, args)
    else:
        statuses = results(work) if (work / "mutants").is_dir() else {}
        whole = prefixes == (f"nlmsync.{package}.",) and not args.recheck
        names = [name for prefix in prefixes for name in to_check(statuses, prefix, args.recheck)]
        if not args.report and (whole or names):
            code = check(work, package, [] if whole else names, args.slow, args.children)
            if code:
                raise _failed(work, code)
            statuses = results(work)
    statuses = {name: status for name, status in statuses.items() if name.startswith(prefixes)}
    known = {name: why for prefix in prefixes for name, why in equivalents(prefix).items()
             if args.sample is None or name in statuses}
    for name in sorted(n for n, status in statuses.items() if status == "survived" and n not in known):
        if package in SQL_PACKAGES and sql_letter_case(*diff_lines(work, name)):
            known[name] = SQL_LETTER_CASE
    at_import = {name: test for prefix in prefixes for name, test in equivalents(prefix, "at_import").items()}
    statuses.update({name: "caught by hand" for name, status in statuses.items()
                     if name in at_import and status in RECHECKED})
    counted = {name: status for name, status in statuses.items() if name not in known and status != "not checked"}
    unchecked = sum(status == "not checked" for status in statuses.values())
    killed = sum(status in CAUGHT for status in counted.values())
    left = sorted(name for name, status in counted.items() if status not in CAUGHT)
    stale = sorted(name for name, why in known.items() if statuses.get(name) != "survived" and why != SQL_LETTER_CASE)
    stale += sorted(name for name in at_import if statuses.get(name, "gone") not in ("caught by hand", "not checked")
                    and (args.sample is None or name in statuses))
    score = killed / len(counted) if counted else 1.0
    drawn = f"a sample of {len(statuses)} mutants (seed {args.seed})" if args.sample is not None else \
        f"{len(statuses)} mutants"
    low, high = wilson(killed, len(counted))
    interval = f" (95% interval {low:.1%} to {high:.1%})" if args.sample is not None else ""
    print(f"{' '.join(args.targets)}: {drawn}, {len(known)} equivalent, {killed} of {len(counted)} caught: "
          f"{score:.1%}{interval}" + (f" ({unchecked} not checked yet: run again to go on)" if unchecked else ""))
    for name in left:
        print(f"  {counted[name]}: {name}")
        if args.survivors:
            shown = subprocess.run([_mutmut(), "show", name], cwd=work, capture_output=True, text=True).stdout
            print("    " + shown.replace("\n", "\n    "))
    for name in stale:
        named = "named caught at import" if name in at_import else "named equivalent"
        print(f"  {named}, but {statuses.get(name, 'no longer a mutant')}: {name}")


if __name__ == "__main__":
    main()
