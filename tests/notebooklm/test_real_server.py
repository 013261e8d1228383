"""The real `notebooklm-mcp` (PyPI notebooklm-mcp-cli, no login) through the same client code.

It runs with HOME and the XDG folders in a temporary directory, so it finds no login, opens no browser and
writes nothing outside the test's folder. It must connect, `server_info` must parse, a Google-backed call
must surface as "authentication required" (exit code 5, one line, no traceback), and its published input
schemas must be the ones the fake copies. The server compared is the installed `notebooklm-mcp-cli` (pinned by
the test extra); its version comes from the package metadata and is named in the failures.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from tests.notebooklm.protocol import (
    REAL_DISTRIBUTION,
    USED_TOOLS,
    private_home,
    real_server_command,
    real_server_version,
    without_descriptions,
)

from nlmsync.cli import main
from nlmsync.config import Settings
from nlmsync.errors import AuthenticationRequiredError, ServerError, ServerValidationError, exit_code_for
from nlmsync.fake import FakeNotebookLM, build_fake_server
from nlmsync.notebooklm import connect
from nlmsync.notebooklm.classify import is_unknown_tool

pytestmark = [pytest.mark.real_server, pytest.mark.slow]  # each test starts the real server


@pytest.fixture
def real_server(tmp_path: Path) -> tuple[str, dict[str, str]]:
    return real_server_command(), private_home(tmp_path)


@pytest.mark.anyio
async def test_real_server_without_login(real_server: tuple[str, dict[str, str]], tmp_path: Path) -> None:
    spec, env = real_server
    async with connect(spec, Settings(), env=env) as client:
        with anyio.fail_after(120):
            info = await client.server_info()
            assert info.version == real_server_version(), f"the server runs, but is not the installed {REAL_DISTRIBUTION}"
            assert info.auth_status == "not_configured"
            with pytest.raises(AuthenticationRequiredError) as info_get:
                await client.notebook_get("00000000-0000-0000-0000-000000000000")
            assert exit_code_for(info_get.value) == 5
            assert "No authentication found" in info_get.value.raw
            with pytest.raises(AuthenticationRequiredError):
                await client.notebook_list()
            with pytest.raises(AuthenticationRequiredError) as renewal:  # nothing saved to reload
                await client.refresh_auth()
            assert "nlm login" in renewal.value.raw
            with pytest.raises(AuthenticationRequiredError):  # the allowance needs the login too
                await client.usage()
            with pytest.raises(ServerError) as unknown:  # how an older server refuses a tool it lacks
                await client.call("no_such_tool", {})
            assert is_unknown_tool(unknown.value)
            assert client.login.renewals == 0  # a server with no login at all is not asked to renew
            with pytest.raises(ServerValidationError):
                await client.call("notebook_get", {"notebook_id": "x", "unknown_argument": 1})
            tools = {name: without_descriptions(schema)
                     for name, schema in (await client.tool_input_schemas()).items()}
        assert client.connections_opened == 1
    async with Client(build_fake_server(FakeNotebookLM())) as fake:
        published = {tool.name: without_descriptions(tool.input_schema) for tool in (await fake.list_tools()).tools}
    assert set(published) == USED_TOOLS
    assert {name: tools.get(name) for name in USED_TOOLS} == published, f"compared with {REAL_DISTRIBUTION} {info.version}"
    written = {p.relative_to(tmp_path).parts[0] for p in tmp_path.rglob("*")}
    assert written <= {"home"}


@pytest.mark.parametrize(("command", "doing"), [(["server-info"], "listing the notebooks"),
                                               (["--notebook", "abc", "status"], "reading the notebook")])
def test_real_server_auth_error_through_the_cli(real_server: tuple[str, dict[str, str]], tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                command: list[str], doing: str) -> None:
    spec, env = real_server
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in [n for n in os.environ if n.startswith("NLMSYNC_")]:
        monkeypatch.delenv(name)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "note.md").write_text("# A note\n", encoding="utf-8")
    code: Any = 0
    try:
        main(["--vault", str(vault), "--server", spec, *command])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 5
    if command == ["server-info"]:  # what it did learn first: the version, and that nobody is logged in
        assert out.splitlines()[1:] == [f"version:     {real_server_version()}",
                                        "auth status: not logged in (not_configured)"]
    else:
        assert out == ""
    lines = err.splitlines()
    assert lines[0] == f"nlmsync: error: {doing}: the NotebookLM server needs a Google login (No authentication found)"
    assert all(line.startswith("nlmsync: ") for line in lines) and len(lines) <= 2
    assert "Traceback" not in err


def test_the_default_server_installed_beside_nlmsync_is_found_without_activating_the_venv(tmp_path: Path) -> None:
    """Installed as `pip install . notebooklm-mcp-cli` and run as `.venv/bin/nlmsync` with the venv not on
    PATH: nlmsync starts the real server from its own bin folder (not logged in: exit 5, not "not found")."""
    nlmsync = Path(sys.executable).with_name("nlmsync")
    assert (Path(sys.executable).parent / "notebooklm-mcp").exists(), "the test extra installs the real server"
    vault = tmp_path / "vault"
    vault.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("NLMSYNC_")}, **private_home(tmp_path),
           "PATH": os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                                   if Path(d) != Path(sys.executable).parent)}
    done = subprocess.run([str(nlmsync), "--vault", str(vault), "server-info"], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 5, done.stderr
    assert "auth status: not logged in" in done.stdout
