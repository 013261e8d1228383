"""Pure alias-chain logic: resolution to a fixed point and the plan of a registration.

An alias `previous -> current` says a source was replaced by another. The store keeps the alias map
flat — every alias points at a fixed point — so resolution is one hop in practice; resolution still
walks any chain and is safe against cycles (a hand-edited or damaged file).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

TargetOf = Callable[[str], "str | None"]
ReferrersOf = Callable[[str], Iterable[str]]


def resolve_chain(target_of: TargetOf, source_id: str) -> str:
    """Follow aliases from `source_id` until a fixed point; on a cycle stop at the last unseen id."""
    seen = {source_id}
    current = source_id
    while True:
        nxt = target_of(current)
        if nxt is None or nxt in seen:
            return current
        seen.add(nxt)
        current = nxt


@dataclass(frozen=True, slots=True)
class AliasPlan:
    """The writes of one registration: `set` maps ids to their new target; `delete` lists ids that
    become fixed points again (their alias would otherwise close a cycle)."""

    resolved: str
    set: dict[str, str]
    delete: frozenset[str]


def plan_alias_registration(target_of: TargetOf, referrers_of: ReferrersOf, previous: str,
                            current: str) -> AliasPlan:
    """Plan `register_source_alias(previous, current)` (alias registration).

    `target_of(id)` is the stored alias of an id (or None); `referrers_of(id)` lists the ids whose
    alias points directly at it.

    1. Resolve `current` first (ignoring `previous`'s own alias, which this registration replaces).
    2. Store `previous -> resolved`.
    3. Rewrite every alias that pointed at `previous` to point at `resolved`.
    If `current`'s chain leads back to `previous`, `current` is live again: its alias is dropped, so
    no cycle can form.
    """
    if previous == current:
        return AliasPlan(resolved=resolve_chain(target_of, current), set={}, delete=frozenset())

    def target_without_previous(source_id: str) -> str | None:
        return None if source_id == previous else target_of(source_id)

    resolved = resolve_chain(target_without_previous, current)
    delete: frozenset[str] = frozenset()
    if resolved == previous:
        resolved = current
        delete = frozenset({current})
    updates = {previous: resolved}
    for alias in referrers_of(previous):
        if alias not in delete and alias != resolved:
            updates[alias] = resolved
    return AliasPlan(resolved=resolved, set=updates, delete=delete)
