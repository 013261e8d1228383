"""The real NotebookLM MCP server's published tool schemas, listed live from the installed package.

The test extra pins `notebooklm-mcp-cli`; its `notebooklm-mcp` answers `tools/list` without a Google login.
It runs with HOME and the XDG folders in a private directory, so it finds no login, opens no browser and
writes nothing outside that directory. Schemas are compared without their prose (`description`).
"""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import anyio

from nlmsync.config import Settings
from nlmsync.notebooklm import connect

REAL_DISTRIBUTION = "notebooklm-mcp-cli"
# The tools nlmsync calls or may call: the fake publishes exactly these, with the real input schemas.
USED_TOOLS = frozenset({"notebook_query", "notebook_list", "notebook_get", "notebook_create", "notebook_delete",
                        "server_info", "source_add", "source_rename", "source_delete", "source_describe",
                        "source_get_content", "refresh_auth", "usage_get"})


@dataclass(frozen=True)
class RealTools:
    """What the installed real server publishes: its distribution version and input schemas by tool name."""

    version: str
    schemas: dict[str, Any]

    @property
    def compared(self) -> str:
        return f"{REAL_DISTRIBUTION} {self.version}"


def without_descriptions(value: Any) -> Any:
    """A JSON schema with every `description` removed (the fake words its descriptions itself)."""
    if isinstance(value, dict):
        return {k: without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [without_descriptions(v) for v in value]
    return value


def real_server_version() -> str:
    """The installed notebooklm-mcp-cli version (package metadata), or "" when it is not installed."""
    try:
        return metadata.version(REAL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return ""


def real_server_command() -> str:
    """`notebooklm-mcp --transport stdio`, from this interpreter's environment first."""
    beside = Path(sys.executable).parent / "notebooklm-mcp"
    found = str(beside) if beside.exists() else shutil.which("notebooklm-mcp")
    assert found, f"notebooklm-mcp is not installed (pip install -e '.[test]' installs {REAL_DISTRIBUTION})"
    return f"{found} --transport stdio"


def private_home(root: Path) -> dict[str, str]:
    """Environment for the real server: HOME and the XDG folders under `root/home`, no cookies, no browser."""
    home = root / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_STATE_HOME": str(home / ".local/state"),
            "NOTEBOOKLM_COOKIES": "", "BROWSER": "true"}


def list_real_tools(root: Path) -> RealTools:
    """Start the installed real server in a private home under `root` and list its tools (no login needed)."""
    version = real_server_version()
    assert version, f"{REAL_DISTRIBUTION} is not installed (pip install -e '.[test]')"

    async def listed() -> dict[str, Any]:
        async with connect(real_server_command(), Settings(), env=private_home(root)) as client:
            with anyio.fail_after(120):
                return await client.tool_input_schemas()

    schemas = anyio.run(listed)
    return RealTools(version, {name: without_descriptions(schema) for name, schema in schemas.items()})
