"""Conversation source carry-over: `history_source_ids`.

The sources a conversation already relied on are sent again with a follow-up question, so the
answer can still cite them — bounded, and only those that are still live.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

DEFAULT_CARRY_OVER_CAP = 40


def history_source_ids(records_newest_first: Iterable[Sequence[str]], resolve: Callable[[str], str],
                       remote_ids: Collection[str], cap: int = DEFAULT_CARRY_OVER_CAP) -> list[str]:
    """Source ids to carry over from a conversation's query records.

    1. walk the records newest to oldest; 2. resolve each id through the alias chain; 3. keep only
    ids currently present remotely; 4. deduplicate, first seen (newest) wins; 5. stop at `cap`.
    """
    kept: list[str] = []
    seen: set[str] = set()
    if cap <= 0:
        return kept
    for source_ids in records_newest_first:
        for source_id in source_ids:
            resolved = resolve(source_id)
            if resolved in seen or resolved not in remote_ids:
                continue
            seen.add(resolved)
            kept.append(resolved)
            if len(kept) >= cap:
                return kept
    return kept
