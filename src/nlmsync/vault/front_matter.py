"""Front matter: the block between `---` lines at the very start of a note, read as YAML; never raises.

The block is read by PyYAML's safe loader (libyaml's when the wheel has it: same result, about eight times
faster), with one change to its YAML 1.1 rules: a plain scalar is a boolean or null, or else the string as it
is written. The front matter's values are searched as text, and YAML 1.1 would turn `12:30` into 750, `010`
into 8, `1.10` into 1.1 and `2024-01-01` into a date; nlmsync reads no number or date of the front matter.
Booleans keep YAML 1.1's spellings (`false`, `no`, `off`), as `nlmsync: false` always had them.

Front matter that is not valid YAML (or not a mapping) gives no data — except that a line `nlmsync: false`
(or `no`, `off`) still keeps the note out: excluding too much is the safe side. PyYAML is imported with the
first note that has front matter, so a search over an unchanged vault does not load it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from nlmsync.vault.notes import iter_lines

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
# the exclusion flag in front matter that is not valid YAML: a line of its own, at the top level
_OPT_OUT_LINE = re.compile(r"^nlmsync[ \t]*:[ \t]*(?i:false|no|off)[ \t]*(?:#.*)?\r?$", re.MULTILINE)


def parse_front_matter(text: str) -> FrontMatter:
    """Front matter delimited by `---` lines at the very start of a note (closed by `---` or `...`)."""
    lines = iter_lines(text)
    first = next(lines, None)
    if first is None or not _FENCE.match(first.removeprefix("\ufeff")):
        return FrontMatter({}, 0)
    offset = len(first)
    for line in lines:
        start = offset
        offset += len(line)
        if _CLOSE.match(line.rstrip("\r\n")):
            return FrontMatter(_mapping(text[len(first):start]), offset)
    return FrontMatter({}, 0)


def front_matter_strings(value: Any) -> list[str]:
    """The scalars of a front matter value as text, in order (the items of a list, the values of a mapping,
    nested ones included); null gives nothing."""
    if value is None:
        return []
    if isinstance(value, list):
        return [text for item in value for text in front_matter_strings(item)]
    if isinstance(value, dict):
        return [text for item in value.values() for text in front_matter_strings(item)]
    return [str(value)]


def _mapping(block: str) -> dict[str, Any]:
    yaml_module, loader = _yaml()
    try:
        data = yaml_module.load(block, Loader=loader)
    except yaml_module.YAMLError:
        return {"nlmsync": False} if _OPT_OUT_LINE.search(block) else {}
    if not isinstance(data, dict):
        return {}
    return {key if isinstance(key, str) else str(key): value for key, value in data.items()}


@cache
def _yaml() -> tuple[Any, type[yaml.SafeLoader]]:
    """PyYAML and the loader for front matter: the safe loader (in C where available) whose plain scalars
    are only booleans, null or strings."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    resolvers = {first: [(tag, regexp) for tag, regexp in rules if tag in (_BOOL_TAG, _NULL_TAG)]
                 for first, rules in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    loader = type("FrontMatterLoader", (base,), {"yaml_implicit_resolvers": resolvers})
    return yaml, loader
