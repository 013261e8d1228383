"""Imports point down the layers of DESIGN.md (base < state < domain < app < interfaces), and the domain
packages use each other only in the directions written in DOMAIN_USES.

DESIGN.md draws the three domain packages side by side under the app, which alone puts them together. The
uses between them that the code has are written down here with their reason; any other (a new direction, or
a cycle) fails until it is added here on purpose. Every import counts: relative ones, `import nlmsync.x`,
and those under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "nlmsync"

LAYER_OF_TOP = {
    "errors": 0, "config": 0, "vault": 0, "text": 0, "documents": 0, "_lazy": 0, "_text": 0,
    "store": 1,
    "search": 2, "reading": 2, "notebooklm": 2, "sync": 2, "fake": 2,
    "app": 3,
    "cli": 4, "server": 4, "watch": 4, "__main__": 4, "testing": 4,
}
DOMAIN = {top for top, layer in LAYER_OF_TOP.items() if layer == 2}

# Importing part (a domain package or a subpackage of one; the longest match applies) -> the domain
# packages it may import.
DOMAIN_USES: dict[str, frozenset[str]] = {
    # The selector stands alone: it knows nothing of notebooks or sources.
    "search": frozenset(),
    # Reading a note (chunks, snippets, read_note) scores its passages with search's BM25 and query terms (the
    # tokenizer is the text package's, in the base layer); citations find the heading above a quote with search's
    # markdown lines.
    "reading": frozenset({"search"}),
    # sync drives the NotebookLM client it is handed and imports none of notebooklm; it ranks nothing.
    "sync": frozenset(),
    # The client knows nothing of search, sync or the fake: the app hands it the fake for `--server fake`.
    "notebooklm": frozenset(),
    # The bundled fake answers questions by ranking passages with search's BM25, query terms and markdown lines,
    # and kills its in-process connections through the client's in-process transport (as if its process had died).
    "fake": frozenset({"search", "notebooklm"}),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(("nlmsync", *parts[:-1])) if parts[-1] == "__init__" else ".".join(("nlmsync", *parts))


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imported_modules(source: str, module: str, is_package: bool = False, *, names: bool = False) -> set[str]:
    """The nlmsync modules `source` (the text of `module`) imports, relative imports resolved; with `names`,
    `from X import y` gives `X.y` (a submodule, or a name of X)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if names or target == "nlmsync" or (node.level and not node.module):
                found.update(f"{target}.{alias.name}" for alias in node.names)
            else:
                found.add(target)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.split(".")[0] == "nlmsync" and name != "nlmsync"}


def _top(module: str) -> str:
    return module.split(".")[1]


def violations(module: str, imported: set[str]) -> list[str]:
    """What is wrong with `module` importing `imported` (nlmsync module names), one line each."""
    mine = _top(module)
    wrong = []
    for name in sorted(imported):
        top = _top(name)
        if top == "__version__" or top == mine:
            continue
        if LAYER_OF_TOP.get(top, -1) > LAYER_OF_TOP[mine]:
            wrong.append(f"{module} imports {name}: a higher layer")
        elif mine in DOMAIN and top in DOMAIN:
            rule = max((part for part in DOMAIN_USES if f"{module}.".startswith(f"nlmsync.{part}.")), key=len)
            if top not in DOMAIN_USES[rule]:
                wrong.append(f"{module} imports {name}: nlmsync.{rule} may use "
                             f"{sorted(DOMAIN_USES[rule]) or 'no other domain package'} (DOMAIN_USES)")
    return wrong


def test_no_module_imports_from_a_higher_layer() -> None:
    found = []
    for path in SRC.rglob("*.py"):
        module = _module_name(path)
        if module == "nlmsync":
            continue
        assert _top(module) in LAYER_OF_TOP, f"{module}: not placed in a layer (add it to LAYER_OF_TOP)"
        found += violations(module, imported_modules(path.read_text(encoding="utf-8"), module, _is_package(path)))
    assert found == []


def import_cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of modules importing each other (`imports`: module -> the modules it imports), each as the
    sorted modules of one strongly connected part."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        order[module] = low[module] = len(order)
        stack.append(module)
        for other in imports.get(module, set()):
            if other not in order:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], order[other])
        if low[module] == order[module]:
            part = stack[stack.index(module):]
            del stack[stack.index(module):]
            if len(part) > 1:
                cycles.append(sorted(part))

    for module in sorted(imports):
        if module not in order:
            visit(module)
    return cycles


def test_no_two_modules_import_each_other_even_for_type_checking_or_inside_a_function() -> None:
    paths = {_module_name(path): path for path in SRC.rglob("*.py")}

    def module_of(name: str) -> str:  # `nlmsync.search.bm25.idf` or `nlmsync.search.bm25` -> the module
        while name not in paths:
            name = name.rpartition(".")[0]
        return name

    imports = {module: {module_of(name) for name in imported_modules(path.read_text(encoding="utf-8"), module,
                                                                      _is_package(path), names=True)} - {module}
               for module, path in paths.items()}
    assert import_cycles(imports) == []
    assert import_cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_the_domain_uses_have_no_cycle_and_every_domain_package_has_a_rule() -> None:
    assert {part.split(".")[0] for part in DOMAIN_USES} == DOMAIN
    uses = {top: set().union(*(allowed for part, allowed in DOMAIN_USES.items() if part.split(".")[0] == top))
            for top in DOMAIN}
    for top in DOMAIN:
        reached, frontier = set(), set(uses[top])
        while frontier:
            reached |= frontier
            frontier = set().union(*(uses[t] for t in frontier)) - reached
        assert top not in reached, f"nlmsync.{top} reaches itself through DOMAIN_USES"


def test_the_check_sees_every_kind_of_import_and_every_wrong_direction() -> None:
    source = ("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
              "import nlmsync.sync.plan\nfrom nlmsync import app\nfrom ..notebooklm import client\n"
              "from .bm25 import idf\nfrom . import tokenize\nif TYPE_CHECKING:\n    from nlmsync.cli import main\n")
    imported = imported_modules(source, "nlmsync.search.snippets")
    assert imported == {"nlmsync.sync.plan", "nlmsync.app", "nlmsync.notebooklm", "nlmsync.search.bm25",
                        "nlmsync.search.tokenize", "nlmsync.cli"}
    assert [line.split(":")[0] for line in violations("nlmsync.search.snippets", imported)] == [
        "nlmsync.search.snippets imports nlmsync.app", "nlmsync.search.snippets imports nlmsync.cli",
        "nlmsync.search.snippets imports nlmsync.notebooklm", "nlmsync.search.snippets imports nlmsync.sync.plan"]
    assert imported_modules("from . import fake\n", "nlmsync.notebooklm", is_package=True) == {"nlmsync.notebooklm.fake"}
    assert violations("nlmsync.fake.answers", {"nlmsync.search.bm25"}) == []
    assert violations("nlmsync.fake.server", {"nlmsync.notebooklm.transports"}) == []
    assert violations("nlmsync.notebooklm.transports", {"nlmsync.fake.server"}) != []
    assert violations("nlmsync.fake.state", {"nlmsync.app"}) != []
    assert violations("nlmsync.notebooklm.client", {"nlmsync.search.bm25"}) != []
    assert violations("nlmsync.reading.citations", {"nlmsync.search.markdown", "nlmsync.store", "nlmsync.vault"}) == []
    assert violations("nlmsync.sync.prepare", {"nlmsync.notebooklm.client"}) != []
    assert violations("nlmsync.app", {"nlmsync.sync", "nlmsync.search", "nlmsync.notebooklm"}) == []
