"""The reading process: reads the files it is asked for, one at a time, and answers each with its text.

Run by `DocumentReader` as `python -m nlmsync.documents.worker MEMORY_BYTES`, bounded in memory (where the system
can bound it) and, by the reader, in time: a damaged or crafted document can only stop this process, never
nlmsync's. One request a line on stdin, `{"path", "suffix", "hash"}`; one answer a line on stdout, `{"unit",
"pages", "notice", "cacheable"}`. The file is hashed again as it is read: bytes that are not those the reader
hashed changed in between, and say nothing lasting.
"""

from __future__ import annotations

import json
import os
import sys

import xxhash

from nlmsync.documents.formats import extract
from nlmsync.documents.model import CHANGED_WHILE_READ, DAMAGED, MAX_FILE_BYTES, OUT_OF_MEMORY, Unreadable


def bound_memory(limit: int) -> None:
    """Keep this process's address space under `limit` bytes where the system can (not on Windows)."""
    try:
        import resource
    except ImportError:
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    wanted = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    if soft == resource.RLIM_INFINITY or soft > wanted:
        resource.setrlimit(resource.RLIMIT_AS, (wanted, hard))


def answer(request: dict[str, str], limit: int) -> dict[str, object]:
    """The text of the file `request` names, or the notice that says why there is none."""
    try:
        with open(request["path"], "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        return {"notice": f"unreadable ({exc.strerror})", "cacheable": False}
    if xxhash.xxh3_128_hexdigest(data) != request["hash"]:
        return {"notice": CHANGED_WHILE_READ, "cacheable": False}
    try:
        unit, pages, notice = extract(request["suffix"], data)
    except Unreadable as exc:
        return {"notice": str(exc)}
    except MemoryError:
        return {"notice": OUT_OF_MEMORY.format(mib=limit >> 20)}
    except RecursionError:
        return {"notice": DAMAGED.format(why="nested too deeply")}
    except Exception as exc:  # untrusted bytes may trip any error of a library: the file is damaged, not nlmsync
        return {"notice": DAMAGED.format(why=type(exc).__name__)}
    return {"unit": unit, "pages": pages, "notice": notice}


def main() -> None:
    limit = int(sys.argv[1])
    bound_memory(limit)
    for line in sys.stdin.buffer:
        reply = answer(json.loads(line), limit)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    # every answer is written: end at once, without the interpreter's and PDFium's clean-up (a tenth of a second or
    # more, which the reader waits for when it closes)
    os._exit(0)


if __name__ == "__main__":
    main()
