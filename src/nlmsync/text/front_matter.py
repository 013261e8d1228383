"""Front matter: the block between `---` lines at the very start of a note, read as YAML; never raises.

The block is read by PyYAML's safe loader (libyaml's when the wheel has it: same result, about eight times
faster), with one change to its YAML 1.1 rules: a plain scalar is a boolean or null, or else the string as it
is written. The front matter's values are searched as text, and YAML 1.1 would turn `12:30` into 750, `010`
into 8, `1.10` into 1.1 and `2024-01-01` into a date; nlmsync reads no number or date of the front matter.
Booleans keep YAML 1.1's spellings (`false`, `no`, `off`), as `nlmsync: false` always had them.

Front matter that is not valid YAML (or not a mapping) gives no data — except that a line `nlmsync: false`
(or `no`, `off`) still keeps the note out (`opted_out`): excluding too much is the safe side. PyYAML is imported
with the first note whose front matter is read as YAML, so a search over an unchanged vault does not load it, and
what only needs to know where the markdown starts (`front_matter_end`: a snippet, a transcript's lines) never does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from nlmsync.text.lines import iter_lines

if TYPE_CHECKING:
    import yaml


@dataclass(frozen=True)
class FrontMatter:
    """The front matter's mapping (string keys, YAML values) and where the markdown body starts."""

    data: dict[str, Any]
    body_start: int


_FENCE = re.compile(r"^---[ \t]*\r?$")
_CLOSE = re.compile(r"^(---|\.\.\.)[ \t]*\r?$")
_BOOL_TAG = "tag:yaml.org,2002:bool"
_NULL_TAG = "tag:yaml.org,2002:null"
_AS_WRITTEN_TAGS = tuple(f"tag:yaml.org,2002:{name}" for name in ("int", "float", "timestamp", "binary"))
_C_LOADER_INDICATORS = 256
# the exclusion flag in front matter that is not valid YAML: a line of its own, at the top level
_OPT_OUT_LINE = re.compile(r"^nlmsync[ \t]*:[ \t]*(?i:false|no|off)[ \t]*(?:#.*)?\r?$", re.MULTILINE)


def parse_front_matter(text: str) -> FrontMatter:
    """Front matter delimited by `---` lines at the very start of a note (closed by `---` or `...`)."""
    block = _block(text)
    if block is None:
        return FrontMatter({}, 0)
    start, end, body_start = block
    return FrontMatter(_mapping(text[start:end]), body_start)


def front_matter_end(text: str) -> int:
    """Where the note's markdown starts: after its front matter, 0 when it has none (its YAML is not read)."""
    block = _block(text)
    return 0 if block is None else block[2]


def opted_out(front: FrontMatter) -> bool:
    """Whether the front matter keeps its note out of nlmsync (`nlmsync: false`)."""
    return front.data.get("nlmsync") is False


def may_opt_out(text: str) -> bool:
    """Whether the front matter of `text` could keep its note out (`opted_out`): its block names `nlmsync`, or
    holds a backslash (a quoted key may spell a word with escapes). A note without either is taken without its
    YAML being read: reading the YAML is most of what taking a note costs."""
    block = _block(text)
    if block is None:
        return False
    start, end, _ = block
    return text.find("nlmsync", start, end) >= 0 or text.find("\\", start, end) >= 0


def _block(text: str) -> tuple[int, int, int] | None:
    """Where the front matter's YAML starts and ends, and where the markdown after it starts; None without one."""
    if not text.startswith(("---", "\ufeff---")):  # most notes: told without splitting their first lines
        return None
    lines = iter_lines(text, 0, 1024)  # front matter is short: split the note a little at a time
    first = next(lines, None)
    if first is None or not _FENCE.match(first.removeprefix("\ufeff")):
        return None
    offset = len(first)
    for line in lines:
        start = offset
        offset += len(line)
        if _CLOSE.match(line.rstrip("\r\n")):
            return len(first), start, offset
    return None


def front_matter_strings(value: Any) -> list[str]:
    """The scalars of a front matter value as text, in order (the items of a list, the values of a mapping,
    nested ones included); null gives nothing. A list or mapping reached twice (a YAML alias) is read once,
    so an alias that refers to itself or to a tower of aliases costs no more than the front matter's size."""
    texts: list[str] = []
    seen: set[int] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, dict)):
            if id(item) not in seen:
                seen.add(id(item))
                stack.extend(reversed(item.values() if isinstance(item, dict) else item))
        elif item is not None:
            texts.append(str(item))
    return texts


def _mapping(block: str) -> dict[str, Any]:
    yaml_module, fast, safe = _yaml()
    # libyaml composes nested values by C recursion, which a few tens of thousands of `[` or `- ` overflow
    # (the process dies); a value nests no deeper than its count of `[ { - : ?`, so past a bound the Python
    # loader, whose recursion is checked, reads the block. Real front matter has a few dozen at most.
    loader = fast if sum(map(block.count, "[{-:?")) <= _C_LOADER_INDICATORS else safe
    try:
        data = yaml_module.load(block, Loader=loader)
    # untrusted text: besides YAMLError, `!!bool maybe` raises KeyError, a deep value in Python RecursionError
    except (yaml_module.YAMLError, RecursionError, LookupError, ValueError, TypeError):
        return {"nlmsync": False} if _OPT_OUT_LINE.search(block) else {}
    if not isinstance(data, dict):
        return {}
    return {key if isinstance(key, str) else str(key): value for key, value in data.items()}


@cache
def _yaml() -> tuple[Any, type[yaml.CSafeLoader | yaml.SafeLoader], type[yaml.SafeLoader]]:
    """PyYAML and the loaders for front matter, in C (where available) and in Python: the safe loader whose
    plain scalars are only booleans, null or strings, and whose explicit `!!int`, `!!float`, `!!timestamp`
    and `!!binary` are the string as written too, so a value is a string, boolean, null, list or mapping."""
    import yaml

    resolvers = {first: [(tag, regexp) for tag, regexp in rules if tag in (_BOOL_TAG, _NULL_TAG)]
                 for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    constructors = dict(yaml.SafeLoader.yaml_constructors)
    for tag in _AS_WRITTEN_TAGS:
        constructors[tag] = yaml.SafeLoader.construct_scalar
    rules = {"yaml_implicit_resolvers": resolvers, "yaml_constructors": constructors}
    # type() makes classes the type checkers cannot follow: the casts say what they derive from
    safe = cast("type[yaml.SafeLoader]", type("FrontMatterLoader", (yaml.SafeLoader,), rules))
    c_safe = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's loader, where the wheel has libyaml
    fast = cast("type[yaml.CSafeLoader | yaml.SafeLoader]", type("FrontMatterCLoader", (c_safe,), rules))
    return yaml, fast, safe
