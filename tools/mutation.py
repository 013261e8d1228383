"""Mutation testing of one package of nlmsync with mutmut: how many small planted bugs its tests catch.

    .venv/bin/pip install -e '.[test,mutation]'
    .venv/bin/python tools/mutation.py store            # or notebooklm, sync, app, cli
    .venv/bin/python tools/mutation.py store --survivors   # and show each surviving mutant's diff

Run by hand (or by a scheduled job), never by the tests or CI. The repository's tracked files are copied into
`.mutation/PACKAGE/` (kept between runs: mutmut then tests again only the functions that changed), the copy's
`[tool.mutmut]` section is narrowed to the package's source and to its tests (`TESTS`), and mutmut runs there at
a low priority (`nice -n 10`), with `--children` test processes at once. For each mutant mutmut runs only the
tests of that selection that executed the mutated function. The selection leaves out the tests marked slow (most
crash points of the crash loops, the end-to-end runs) unless `--slow` is given.

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
CAUGHT = frozenset({"killed", "timeout"})
"""A mutant is caught when a test failed on it, or when the tests ran past their time (it hangs the code)."""
_RESULT = re.compile(r"^\s*(\S+__mutmut_\d+): (.+)$")
_SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|WHERE|FROM|VALUES|ORDER BY|JOIN|LIMIT|SET)\b")
SQL_LETTER_CASE = "SQLite reads SQL keywords and the names of tables and columns in any letter case"


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


def equivalents(package: str) -> dict[str, str]:
    """The mutants of `package` the equivalents file names, with the reason each is equivalent."""
    with EQUIVALENTS.open("rb") as handle:
        named: dict[str, str] = tomllib.load(handle).get("equivalent", {})
    return {name: why for name, why in named.items() if name.startswith(f"nlmsync.{package}.")}


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
    parser.add_argument("package", choices=sorted(TESTS))
    parser.add_argument("--children", type=int, default=1, help="test processes at once (default: %(default)s)")
    parser.add_argument("--slow", action="store_true", help="hold the mutants to the slow tests too")
    parser.add_argument("--report", action="store_true", help="report the last run's results without running")
    parser.add_argument("--survivors", action="store_true", help="show the diff of each unexplained survivor")
    args = parser.parse_args()
    work = REPO / ".mutation" / args.package
    if not args.report:
        work.mkdir(parents=True, exist_ok=True)
        copy_repository(work)
        narrow_config(work / "pyproject.toml", args.package, [*([] if args.slow else ["-m", "not slow"]),
                                                               *TESTS[args.package]])
        run = subprocess.run(["nice", "-n", "10", _mutmut(), "run", "--max-children", str(args.children)],
                             cwd=work, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        if run.returncode:
            raise SystemExit(f"mutmut run failed (exit {run.returncode}); see {work}")
    statuses = results(work)
    known = equivalents(args.package)
    for name in sorted(n for n, status in statuses.items() if status == "survived" and n not in known):
        if sql_letter_case(*diff_lines(work, name)):
            known[name] = SQL_LETTER_CASE
    counted = {name: status for name, status in statuses.items() if name not in known and status != "not checked"}
    unchecked = sum(status == "not checked" for status in statuses.values())
    killed = sum(status in CAUGHT for status in counted.values())
    left = sorted(name for name, status in counted.items() if status not in CAUGHT)
    stale = sorted(name for name, why in known.items() if statuses.get(name) != "survived" and why != SQL_LETTER_CASE)
    score = killed / len(counted) if counted else 1.0
    print(f"{args.package}: {len(statuses)} mutants, {len(known)} equivalent, {killed} of {len(counted)} caught: "
          f"{score:.1%}" + (f" ({unchecked} not checked yet: run again to go on)" if unchecked else ""))
    for name in left:
        print(f"  {counted[name]}: {name}")
        if args.survivors:
            shown = subprocess.run([_mutmut(), "show", name], cwd=work, capture_output=True, text=True).stdout
            print("    " + shown.replace("\n", "\n    "))
    for name in stale:
        print(f"  named equivalent, but {statuses.get(name, 'no longer a mutant')}: {name}")


if __name__ == "__main__":
    main()
