"""The pytest plugin for CI smoke runs against the bundled fake NotebookLM server.

Installed with nlmsync and registered as a `pytest11` entry point, so a project's tests get the
`fake_notebooklm` fixture without importing anything: a `FakeNotebookLMServer` serving a fresh fake for one
test, in this process (`.server`, for `nlmsync.notebooklm.connect` or `Orchestrator.open(server=…)`) or over
streamable HTTP (`.url`, started on first use in a background thread, for `nlmsync --server URL …` in process
or in a subprocess). The test sets capacity and fault switches, then inspects the notebooks and the call log::

    @pytest.mark.fake_notebooklm(capacity=5, drop_on=["source_add:2:after"])
    def test_refresh(fake_notebooklm, tmp_path):
        subprocess.run(["nlmsync", "--vault", "notes", "--server", fake_notebooklm.url,
                        "--notebook", "new:CI", "refresh", "--all"], check=True)
        assert fake_notebooklm.tools_called().count("source_add") == 5

The marker takes `capacity` and the fault switches of `nlmsync fake-server` as keywords (`latency`,
`drop_on_call`, `drop_on`, `error_on`, `rate_limit_on`, `empty_sources_once`, `auth_required`,
`expire_login_after`, `renewal_fails`, `login_back_after`, `usage_used`, `tier`, `without_tool`, `network_down`,
`file_titles_ignored`, `processing_polls`, `processing_fails`: a list of globs);
`configure(...)` changes them mid-test (`without_tool` only takes effect in the marker: the server's tools are
listed when it is built). Nothing heavy is imported until the fixture is used.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from nlmsync.fake import CallRecord, FakeNotebookLM
    from nlmsync.fake.state import FakeNotebook

__all__ = ["FakeNotebookLMServer", "fake_notebooklm"]

MARKER = "fake_notebooklm"
HTTP_START_TIMEOUT = 30.0


class FakeNotebookLMServer:
    """One fake NotebookLM for one test: served in process (`server`) or over HTTP (`url`), inspectable."""

    def __init__(self, capacity: int = 50, **switches: Any) -> None:
        from nlmsync.fake import FakeNotebookLM, build_fake_server

        self.fake: FakeNotebookLM = FakeNotebookLM(capacity=capacity)
        self.configure(**switches)
        self.server: MCPServer = build_fake_server(self.fake)
        self._url: str | None = None
        self._stop: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None

    def configure(self, *, capacity: int | None = None, **switches: Any) -> None:
        """Set the capacity and replace the fault switches (keywords as `nlmsync fake-server`'s switches).

        Raises:
            ValueError: a switch's value cannot be read.
        """
        from nlmsync.fake.faults import build_faults

        if capacity is not None:
            self.fake.capacity = capacity
        self.fake.faults = build_faults(**switches)

    # ----- what the fake holds and saw -----

    @property
    def notebooks(self) -> dict[str, FakeNotebook]:
        """The notebooks by id; each has `title` and `sources` (id → source with `title` and `text`)."""
        return self.fake.notebooks

    def source_titles(self, notebook_id: str) -> list[str]:
        """The titles of a notebook's sources, in the order they were added."""
        return [source.title for source in self.fake.notebooks[notebook_id].sources.values()]

    @property
    def calls(self) -> list[CallRecord]:
        """Every tool call in order: `tool`, `arguments`, `applied`, `status`, `dropped`."""
        return self.fake.calls

    def tools_called(self) -> list[str]:
        """The tool name of every call, in order."""
        return [call.tool for call in self.fake.calls]

    # ----- over HTTP -----

    @property
    def url(self) -> str:
        """The streamable-HTTP URL (`http://127.0.0.1:PORT/mcp`) of this fake; started on first use."""
        if self._url is None:
            self._start_http()
        assert self._url is not None
        return self._url

    def _start_http(self) -> None:
        import anyio

        from nlmsync.fake.server import serve_http

        ready = threading.Event()

        def announce(url: str) -> None:
            self._url = url
            ready.set()

        def on_serving(stop: Callable[[], None]) -> None:
            self._stop = stop

        def run() -> None:
            try:
                anyio.run(lambda: serve_http(self.server, host="127.0.0.1", port=0, announce=announce,
                                             on_serving=on_serving))
            except BaseException as exc:  # noqa: BLE001 - reported to the test thread below
                self._failure = exc
            finally:
                ready.set()

        self._thread = threading.Thread(target=run, name="fake-notebooklm-http", daemon=True)
        self._thread.start()
        if not ready.wait(HTTP_START_TIMEOUT) or self._url is None:
            raise RuntimeError(f"the fake NotebookLM HTTP server did not start: {self._failure!r}")

    def close(self) -> None:
        """Stop the HTTP server, if one was started."""
        if self._thread is None:
            return
        if self._stop is not None:
            self._stop()
        self._thread.join(HTTP_START_TIMEOUT)
        self._thread = None


@pytest.fixture
def fake_notebooklm(request: pytest.FixtureRequest) -> Iterator[FakeNotebookLMServer]:
    """A fresh fake NotebookLM for this test; `@pytest.mark.fake_notebooklm(capacity=…, <switches>)` sets it up."""
    marker = request.node.get_closest_marker(MARKER)
    fake = FakeNotebookLMServer(**(marker.kwargs if marker else {}))
    try:
        yield fake
    finally:
        fake.close()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARKER}(capacity=50, **switches): capacity and fault switches of the "
                                       "fake_notebooklm fixture (keywords as nlmsync fake-server's switches)")
