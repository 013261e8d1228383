"""Fixtures shared by every test package (a private copy of the fixture vault, the anyio backend, the fake
NotebookLM in memory or as `fake-server --transport http` processes, a no-wait retry sleep, `make_world`: an
in-process world for the orchestrator) and the hypothesis profiles.

Profiles: `dev` (small, the default on a workstation) and `ci` (thorough: every property test runs the number
of examples it names; the default when `CI` is set, as CI services do). `HYPOTHESIS_PROFILE=dev|ci`
chooses explicitly. Property tests that name their own count write `max_examples=examples(N)`
(`tests/hypothesis_profiles.py`): N under `ci`, scaled down like the default under `dev`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from hypothesis import settings
from tests.hypothesis_profiles import chosen_profile

from nlmsync.fake import FakeNotebookLM

if TYPE_CHECKING:
    from tests.app.world import World

    from nlmsync.fake.faults import Faults

REPO_ROOT = Path(__file__).resolve().parent.parent

# nlmsync's pytest plugin (the fake_notebooklm fixture) comes in through its pytest11 entry point; an editable
# install made before that entry point was declared lacks it until reinstalled, so it is loaded by name then.
if not entry_points(group="pytest11", name="nlmsync"):
    pytest_plugins = ["nlmsync.testing"]
FIXTURE_VAULT = REPO_ROOT / "fixtures" / "vault"

# deadline=None in both: speed is measured in benchmarks/, never by a timed test.
settings.register_profile("ci", max_examples=100, deadline=None, print_blob=True)
settings.register_profile("dev", max_examples=10, deadline=None)
try:
    settings.load_profile(chosen_profile(os.environ))
except ValueError as exc:
    raise pytest.UsageError(str(exc)) from None


def pytest_report_header(config: pytest.Config) -> str:
    from tests.notebooklm.protocol import REAL_DISTRIBUTION, real_server_version

    version = real_server_version()
    found = f"{REAL_DISTRIBUTION} {version}" if version else f"{REAL_DISTRIBUTION} is not installed"
    return f"real NotebookLM MCP server compared with the fake: {found}"


@pytest.fixture(autouse=True)
def _private_state_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--server fake` keeps its notebooks in the user's state directory (`XDG_STATE_HOME`): each test has its
    own, so no test writes into the account running it, and the nlmsync processes a test starts inherit it."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state-home")))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """A writable copy of fixtures/vault (symlinks kept as links), without any state a demo run left there."""
    target = tmp_path / "vault"
    shutil.copytree(FIXTURE_VAULT, target, symlinks=True, ignore=shutil.ignore_patterns(".nlmsync"))
    return target


class SleepRecorder:
    """An injectable `sleep` that records the requested delays and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def fake() -> FakeNotebookLM:
    return FakeNotebookLM()


@pytest.fixture
def spawn_http_fake(tmp_path: Path) -> Iterator[Callable[..., str]]:
    """Start `nlmsync fake-server --transport http --port 0 ARGS…` processes; each call returns the URL."""
    procs: list[subprocess.Popen[str]] = []

    def spawn(*args: str) -> str:
        proc = subprocess.Popen([sys.executable, "-m", "nlmsync", "fake-server", "--transport", "http", "--port", "0",
                                 *args], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=tmp_path)
        procs.append(proc)
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        return url

    spawn.procs = procs  # type: ignore[attr-defined]
    yield spawn
    for proc in procs:
        proc.terminate()
        proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def make_world(tmp_path: Path) -> Iterator[Callable[..., World]]:
    """Build in-process worlds (`tests/app/world.py`); every store a world handed out (`World.store()`) is closed
    when the test ends."""
    from tests.app.world import new_world

    worlds: list[World] = []

    def make(capacity: int = 50, faults: Faults | None = None, **settings: object) -> World:
        worlds.append(new_world(tmp_path, capacity, faults, **settings))
        return worlds[-1]

    yield make
    for world in worlds:
        world.close()
