"""Which conversation a question goes to: the one named, a new one, or the notebook's latest when the question
follows it up.

A question follows up the latest conversation when the notes it matches well overlap the notes that
conversation's questions match well, or when it matches none well or names nothing (every word of it a stop word:
"And why?" can only be read as a follow-up); `--continue` follows up whatever the question is about. A note matches
a question well when its score is at least the selection rule's `cutoff_ratio` of the best note's: the notes the
rule adds only to reach `min_k` say nothing of what a question is about. The conversation's latest questions
(`FOLLOWED_TURNS`) are matched again against the vault as it is, so both sides are judged alike. An unrelated question (a heapsort question
after a conversation about kimchi) starts a new conversation, so it neither lands in the other conversation nor
carries that conversation's sources over. Pure: the caller runs the searches and tells whether the question
names anything (`search.names_nothing`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["FOLLOWED_TURNS", "follows_up", "well_matched"]

FOLLOWED_TURNS = 5
"""The latest questions of a conversation a new question is compared with (each searched again): what a follow-up
refers to is what was asked last, and a long conversation costs no more than a short one."""


class _Hit(Protocol):
    @property
    def path(self) -> str: ...

    @property
    def score(self) -> float: ...


def well_matched(hits: Sequence[_Hit], cutoff_ratio: float) -> list[str]:
    """The notes of `hits` (best first) that match their question well: at least `cutoff_ratio` of the best's
    score."""
    if not hits:
        return []
    best = max(hit.score for hit in hits)
    return [hit.path for hit in hits if hit.score > 0 and hit.score >= cutoff_ratio * best]


def follows_up(question_notes: Sequence[str], conversation_notes: Iterable[str], *, names_nothing: bool = False) -> bool:
    """Whether a question matching `question_notes` well (and naming nothing, with `names_nothing`) follows up a
    conversation whose questions match `conversation_notes` well (see the module docstring)."""
    return names_nothing or not question_notes or not set(question_notes).isdisjoint(conversation_notes)
