"""Trace: which of nlmsync's source files one packed `refresh --all` with one changed note runs through.

A generated vault (`--notes` notes, deterministic; `pack = "always"`, packs of at most 40,000 bytes, capacity
50) is mirrored into packs by the command line, `nlmsync --server fake refresh --all` (the bundled fake, in this
process); an idle run records the notes' hashes; then one note is edited and the next `refresh --all` is traced.
Every call made while it runs is recorded (`sys.settrace`, call events only; a module's own top-level code, run
when it is first imported, is left out), with the nlmsync function nearest above it on the stack as its
caller. It prints:

- the files the run executes code of, in all and per package, and apart from them the files only the in-process
  fake server runs (its own, `fake/`, and any file called only from inside it): a run against the real server
  runs none of those, so the count without them is what a real run goes through; then the distinct
  file-to-file call edges;
- the calls that run back up the imports (into a file that imports the caller's, directly or not: a callback),
  and inside `sync/` the pairs of files that call each other both ways;
- the chain of nlmsync frames under the `source_add` of the new pack: how deep the upload sits, and which
  file-to-file steps on it come back to a file met before.

    .venv/bin/python benchmarks/trace_run.py [--notes 300] [--files]

The traced package is the one `import nlmsync` finds, so `PYTHONPATH=OTHER/src` traces another checkout of it.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

import nlmsync
from nlmsync.cli import main as nlmsync_main

PACKAGE = Path(nlmsync.__file__).resolve().parent
TOPICS = ["heap", "graph", "tree", "hash", "sort", "queue", "stack", "trie", "cache", "index"]


def note_text(i: int, version: int = 1) -> str:
    topic = TOPICS[i % len(TOPICS)]
    return f"# Note {i} on {topic}\n\nVersion {version}. On {topic}, example {i}.\n\n" + f"{topic} words " * 60 + "\n"


def write_vault(vault: Path, count: int) -> list[str]:
    paths = []
    for i in range(count):
        rel = f"notes/{i // 50:02}/note-{i:04}.md"
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(note_text(i), encoding="utf-8")
        paths.append(rel)
    return paths


def rel(filename: str) -> str | None:
    """The file's path inside the traced package, None for a file outside it."""
    try:
        return Path(filename).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


class Tracer:
    """Records, per call, the nlmsync file called and the nlmsync file nearest above it on the stack."""

    def __init__(self) -> None:
        self.files: Counter[str] = Counter()
        self.outside_fake: Counter[str] = Counter()
        """The calls made with no frame of the fake server above them on the stack, per file."""
        self._in_fake: dict[int, bool] = {}
        """Per nlmsync frame (by id, written at its call event before any of its callees look), whether a frame of
        the fake server is at or above it."""
        self.edges: Counter[tuple[str, str]] = Counter()
        self.add_chain: list[str] | None = None
        self._known: dict[str, str | None] = {}

    def _file(self, frame: FrameType) -> str | None:
        name = frame.f_code.co_filename
        if name not in self._known:
            self._known[name] = rel(name)
        return self._known[name]

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or frame.f_code.co_name == "<module>":
            return None
        callee = self._file(frame)
        if callee is None:
            return None
        self.files[callee] += 1
        caller_frame = frame.f_back
        while caller_frame is not None and self._file(caller_frame) is None:
            caller_frame = caller_frame.f_back
        in_fake = callee.startswith("fake/") or (caller_frame is not None
                                                 and self._in_fake.get(id(caller_frame), False))
        self._in_fake[id(frame)] = in_fake
        if not in_fake:
            self.outside_fake[callee] += 1
        if caller_frame is not None:
            caller = self._file(caller_frame)
            assert caller is not None
            if caller != callee:
                self.edges[(caller, callee)] += 1
        if self.add_chain is None and frame.f_code.co_name == "source_add_text" and callee.startswith("notebooklm/"):
            chain = []
            at: FrameType | None = frame
            while at is not None:
                where = self._file(at)
                if where is not None:
                    chain.append(f"{where}:{at.f_code.co_name}")
                at = at.f_back
            self.add_chain = chain[::-1]
        return None


def module_file(module: str) -> str | None:
    """The package file of a dotted `nlmsync…` module name (or of the module a name is imported from)."""
    parts = module.split(".")[1:]
    while parts:
        for candidate in ("/".join(parts) + ".py", "/".join(parts) + "/__init__.py"):
            if (PACKAGE / candidate).is_file():
                return candidate
        parts = parts[:-1]
    return None


def import_reach() -> dict[str, set[str]]:
    """Per package file, every package file it imports, directly or through others (any import: at the top,
    in a function, for type checking)."""
    direct: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        name = path.relative_to(PACKAGE).as_posix()
        package = ["nlmsync", *name.removesuffix(".py").split("/")]
        package = package[:-1] if name.endswith("__init__.py") else package[:-1]
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join([*base, *([node.module] if node.module else [])])
                targets = [f"{module}.{alias.name}" for alias in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            found.update(f for t in targets if t.startswith("nlmsync.") and (f := module_file(t)) is not None)
        direct[name] = found - {name}
    reach: dict[str, set[str]] = {}
    for start in direct:
        seen: set[str] = set()
        todo = list(direct[start])
        while todo:
            file = todo.pop()
            if file not in seen:
                seen.add(file)
                todo.extend(direct.get(file, ()))
        reach[start] = seen
    return reach


CONFIG = 'pack = "always"\nsource_max_bytes = 40000\ncapacity = 50\n'


def refresh_all(vault: Path) -> None:
    """`nlmsync refresh --all -q` on `vault`, with the bundled fake served in this process."""
    try:
        nlmsync_main(["--vault", str(vault), "--notebook", "new:trace", "--server", "fake --capacity 50",
                      "refresh", "--all", "-q"])
    except SystemExit as exc:
        if exc.code:
            raise


def run(notes: int) -> Tracer:
    with tempfile.TemporaryDirectory() as folder:
        vault = Path(folder) / "vault"
        paths = write_vault(vault, notes)
        (vault / ".nlmsync").mkdir()
        (vault / ".nlmsync" / "config.toml").write_text(CONFIG, encoding="utf-8")
        refresh_all(vault)  # the mirror
        refresh_all(vault)  # idle: the notes' hashes recorded by their files' mtime and size
        (vault / paths[notes // 2]).write_text(note_text(notes // 2, 2), encoding="utf-8")
        tracer = Tracer()
        threading.settrace(tracer)
        sys.settrace(tracer)
        try:
            refresh_all(vault)
        finally:
            sys.settrace(None)
            threading.settrace(None)  # type: ignore[arg-type]
        return tracer


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--notes", type=int, default=300)
    parser.add_argument("--files", action="store_true", help="list every file run through, with its call count")
    args = parser.parse_args()
    tracer = run(args.notes)
    files = sorted(tracer.files)
    packages = Counter(f.split("/")[0] if "/" in f else "(top)" for f in files)
    print(f"nlmsync at {PACKAGE}")
    print(f"files run through: {len(files)}  ({', '.join(f'{p} {n}' for p, n in sorted(packages.items()))})")
    fakes = sorted(set(files) - set(tracer.outside_fake))
    print(f"  of them run only by the in-process fake server: {len(fakes)} ({', '.join(fakes)}); "
          f"without them (what a run against the real server goes through): {len(files) - len(fakes)}")
    print(f"file-to-file edges: {len(tracer.edges)}")
    reach = import_reach()
    up = sorted((a, b) for a, b in tracer.edges if a in reach.get(b, ()) and b not in reach.get(a, ()))
    print(f"calls back up the imports (into a file that imports the caller's): {len(up)}")
    for caller, callee in up:
        print(f"  {caller} -> {callee}")
    inside = {e for e in tracer.edges if e[0].startswith("sync/") and e[1].startswith("sync/")}
    both = sorted((a, b) for a, b in inside if (b, a) in inside and a < b)
    print(f"edges inside sync/: {len(inside)}; pairs of sync/ files calling each other both ways: {len(both)}")
    for a, b in both:
        print(f"  {a} <-> {b}")
    chain = tracer.add_chain or []
    steps = [frame.split(":")[0] for frame in chain]
    hops = [(a, b) for a, b in zip(steps, steps[1:]) if a != b]
    back = [(a, b) for i, (a, b) in enumerate(hops) if b in steps[:steps.index(a)] or b in [x for x, _ in hops[:i]]]
    print(f"source_add of the new pack: {len(chain)} nlmsync frames deep, {len(hops)} file-to-file hops, "
          f"{len(back)} coming back to a file met before")
    for frame in chain:
        print(f"  {frame}")
    if args.files:
        for path in files:
            print(f"  {tracer.files[path]:7d}  {path}")


if __name__ == "__main__":
    main()
