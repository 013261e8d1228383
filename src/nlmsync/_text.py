"""Text shown to a person: a file name, a question or an error message as one line, in the order it was written.

`CONTROL_CHARS` are what lets such text move the cursor, recolour, reorder or split the lines where it is shown:
C0 and C1 controls, line and paragraph separators, and the bidirectional marks, embeddings, overrides and
isolates. Imported by every command's error path (`--help` included), so it imports nothing.
"""

from __future__ import annotations

import re

__all__ = ["CONTROL_CHARS", "visible"]

CONTROL_CHARS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with its `CONTROL_CHARS` written as escapes (`\\n`, `\\x1b`, `\\u202e`), for a message or
    output a person reads; JSON output escapes them itself."""
    if text.isprintable():
        return text
    return CONTROL_CHARS.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)
