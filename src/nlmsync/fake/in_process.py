"""`--server "fake SWITCH…"`: the fake built to be served inside the client's own process.

`serve_in_process` is the `InProcessFake` the app hands the client's server resolution, so the client package
never imports the fake. The fake's modules are imported when a fake is served, not with this one: a run
against a real server loads none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["serve_in_process"]


def serve_in_process(switches: Sequence[str], state_path: Path | None) -> tuple[MCPServer, Callable[[], None]]:
    """The fake's MCP server for `switches` (the words after `fake`), and the function that saves its state.

    The fake keeps its notebooks in `state_path` unless `--state` names another file.

    Raises:
        ValueError: a switch cannot be read (one line, naming the switch).
        InputError: the state file cannot be read.
    """
    from nlmsync.fake.options import parse_fake_options
    from nlmsync.fake.server import build_fake_server
    from nlmsync.fake.state import FakeNotebookLM

    options = parse_fake_options(switches)
    fake = FakeNotebookLM(capacity=options.capacity, faults=options.faults,
                          state_path=options.state if options.state is not None else state_path)
    return build_fake_server(fake), fake.save
