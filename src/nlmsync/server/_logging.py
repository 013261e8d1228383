"""How `serve` logs: one plain line per record on stderr.

The MCP SDK sets up rich's log handler when it builds a server unless logging is set up already. That handler
imports rich's traceback module on the first error it shows, and shows tracebacks with their source lines,
reading files: a server out of file descriptors then fails inside its own error report and dies of it. A
log record must never need a file opened, so `serve` sets up a plain handler before the server is built.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["plain_logging"]


def plain_logging(level: int = logging.WARNING) -> None:
    """Log to stderr as `nlmsync: serve: LEVEL logger: message`, one line per record (a traceback, when a
    record has one, follows it as Python prints it); nothing is opened to write it."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("nlmsync: serve: %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
