"""Every shell block of the README and of docs/ runs as written, in the folder its text says — or is named
below with the reason it cannot run here: it logs in to Google, installs from the network, starts a service
or a server that runs until stopped, or runs for hours on downloaded corpora.

The blocks of a page run in order, each in a fresh `bash` (a `crontab` block's command in `/bin/sh`, as cron
runs it), in one sandbox per page: a home folder holding the vault the docs call `~/notes` (a copy of
`fixtures/vault`, the README's own example vault), two checkouts of it beside it (`checkout-1`, `checkout-2`),
and the clone the cron recipe names (`~/nlmsync`). A block starts in the home folder; one meant for another
folder says so with its first line (`cd ~/notes`). Commands written for the real server (no `--server`) talk to
the bundled fake instead (`NLMSYNC_SERVER=fake`), which stands in for a logged-in server. Each command line
must end with the exit code its comment gives (`# exit 5`), else 0.

The README's install and quick start blocks are what `.ci/run` runs, in a fresh copy of the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SHELL_BLOCKS = {"sh", "bash", "shell", "crontab"}
EXIT_COMMENT = re.compile(r"#\s*exit (\d+)\b")

CI_RUNS_IT = "installs the package and its server from PyPI: .ci/run runs the README's install and quick start"
LOGIN = "signs in to Google (the real server)"
UNTIL_STOPPED = "a server or a watch that runs until it is stopped"
CORPORA = "reads the benchmarks' corpora, downloaded by hand, and runs for minutes to hours"
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install . notebooklm-mcp-cli"): CI_RUNS_IT,
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q . && .venv/bin/nlmsync --vault fixtures/vault "
                  "--server fake --notebook new:Demo ask \"How does heapsort work?\""): CI_RUNS_IT,
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q "
                  "-n auto"): "the test suite itself: .ci/run runs it",
    ("README.md", "nlm login                                                        # once: sign in to Google in a "
                  "browser"): LOGIN,
    ("docs/development.md", "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]'"):
        "the test suite itself: .ci/run runs it",
    ("docs/development.md", ".venv/bin/pip install -q -e '.[test,mutation]'"):
        "installs the mutation tool from PyPI, then runs for tens of minutes a package",
    ("docs/development.md", ".venv/bin/python tools/mutation.py sync --sample 300             # 300 of sync's "
                            "mutants, drawn with the seed 44"):
        "needs the mutation extra, then runs for tens of minutes a sample",
    ("docs/real-server.md", ".venv/bin/pip install . notebooklm-mcp-cli"): CI_RUNS_IT,
    ("docs/real-server.md", "nlm login"): LOGIN,
    ("docs/commands.md", "nlmsync --vault ~/notes watch             # keep the search index current"):
        UNTIL_STOPPED,
    ("docs/mcp-clients.md", "npx -y @modelcontextprotocol/inspector --cli -e NLMSYNC_SERVER=fake -e "
                            "NLMSYNC_NOTEBOOK=new:Demo nlmsync --vault ~/notes serve --method tools/list"):
        "fetches the MCP Inspector with npx (tests/server/test_serve_stdio.py runs its nlmsync command)",
    ("docs/mcp-clients.md", "nlmsync --vault ~/notes serve --transport http --port 8765   # prints "
                            "http://127.0.0.1:8765/mcp"): UNTIL_STOPPED,
    ("docs/unattended.md", "crontab -e"): "opens an editor on the user's crontab",
    ("docs/unattended.md", "systemctl --user daemon-reload"): "starts a service of the system's service manager",
    ("docs/unattended.md", "launchctl bootstrap gui/$(id -u) ~/Library/LaunchAgents/com.example.nlmsync-watch.plist"):
        "starts a service of macOS's service manager",
    ("docs/benchmarks.md", "python benchmarks/corpora.py          # once: download and build the corpora"):
        "downloads the corpora (tests/test_benchmark_corpora.py checks what it says offline)",
    ("docs/benchmarks.md", "python benchmarks/search_peers.py    # about 25 minutes on a 2-core machine"): CORPORA,
    ("docs/benchmarks.md", "python benchmarks/questions.py --against main=/path/to/checkout/src   # about 10 "
                           "minutes on a 2-core machine"): CORPORA,
    ("docs/benchmarks.md", "python benchmarks/scale.py --counts 10000,50000,100000 --runs 5   # about 40 minutes on "
                           "a 2-core machine"): CORPORA,
    ("docs/benchmarks.md", "python benchmarks/sync.py --repeats 3   # about 3 minutes on a 2-core machine"): CORPORA,
    ("docs/benchmarks.md", "python benchmarks/pack.py                                # all cases; about 2 hours on a "
                           "2-core machine"): CORPORA,
    ("docs/benchmarks.md", "python benchmarks/pack.py --cases scale --scale-notes 100000"): CORPORA,
}
# What a block's text says is already done before it runs, done first.
BEFORE: dict[tuple[str, str], list[str]] = {
    # "the notes already in the notebook"
    ("docs/unattended.md", "# every 30 minutes: the notes already in the notebook, brought up to date; a log line "
                           "per run, with its time"): ["nlmsync --vault ~/notes --notebook new:Notes refresh -q "
                                                       "algorithms/"],
}
CRON_LOG_LINE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d \S")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    text: str

    @property
    def key(self) -> tuple[str, str]:
        return self.page, self.text.splitlines()[0]

    def commands(self) -> list[str]:
        """The command lines, a line continued with `\\` joined to the next; blank and comment lines left out."""
        joined = re.sub(r"\\\n", " ", self.text)
        return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for fence in FENCE.finditer(text):
            if fence.group(1) in SHELL_BLOCKS:
                found.append(Block(page.relative_to(ROOT).as_posix(), text.count("\n", 0, fence.start()) + 1,
                                   fence.group(1), fence.group(2)))
    return found


BLOCKS = _blocks()
RUN_PAGES = sorted({b.page for b in BLOCKS if b.key not in NOT_RUN})


def test_every_block_runs_or_is_named_with_the_reason_it_cannot() -> None:
    keys = [b.key for b in BLOCKS]
    assert len(keys) == len(set(keys)), "two blocks of a page start alike: tell them apart"
    assert set(NOT_RUN) <= set(keys), f"named here, but no such block any more: {set(NOT_RUN) - set(keys)}"
    assert set(BEFORE) <= set(keys)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "## Install" in ci and "## Quick start" in ci  # where .ci/run takes the README's blocks from


def _sandbox(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    home = tmp_path / "home"
    for name in ("notes", "checkout-1", "checkout-2"):
        shutil.copytree(ROOT / "fixtures" / "vault", home / name, symlinks=True,
                        ignore=shutil.ignore_patterns(".nlmsync"))
    installed = Path(sys.executable).parent  # where pip put nlmsync, as `export PATH=…/.venv/bin…` says
    (home / "nlmsync" / ".venv").mkdir(parents=True)
    (home / "nlmsync" / ".venv" / "bin").symlink_to(installed, target_is_directory=True)
    env = {name: value for name, value in os.environ.items() if not name.startswith("NLMSYNC_")}
    env.update(HOME=str(home), PATH=f"{installed}{os.pathsep}{env.get('PATH', '')}", NLMSYNC_SERVER="fake")
    return home, env


def _run_shell(block: Block, home: Path, env: dict[str, str], tmp_path: Path) -> list[tuple[str, int, int]]:
    """Run the block's lines in one `bash`; (line, exit code, expected) for each."""
    lines = block.commands()
    codes = tmp_path / "exit-codes"
    codes.unlink(missing_ok=True)
    script = "".join(f'{line}\nprintf "%s\\n" "$?" >> "$EXIT_CODES"\n' for line in lines)
    done = subprocess.run(["bash", "-c", script], cwd=home, env={**env, "EXIT_CODES": str(codes)},
                          capture_output=True, text=True, timeout=600)
    got = [int(code) for code in codes.read_text().split()] if codes.exists() else []
    assert len(got) == len(lines), f"{block}: the block stopped ({done.stderr[-2000:]})"
    return [(line, code, _expected(line)) for line, code in zip(lines, got, strict=True)]


def _run_crontab(block: Block, home: Path, env: dict[str, str]) -> list[tuple[str, int, int]]:
    """Run each crontab line's command as cron does: `/bin/sh -c`, in the home folder, with cron's short PATH."""
    results = []
    for line in block.commands():
        command = line.split(None, 5)[5]
        cron_env = {"HOME": env["HOME"], "LOGNAME": "user", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin",
                    "NLMSYNC_SERVER": "fake", "XDG_STATE_HOME": env["XDG_STATE_HOME"]}
        done = subprocess.run(["/bin/sh", "-c", command], cwd=home, env=cron_env, capture_output=True, text=True,
                              timeout=600)
        assert done.stderr == "", f"{block}: cron would mail this: {done.stderr}"
        results.append((line, done.returncode, 0))
    return results


def _expected(line: str) -> int:
    said = EXIT_COMMENT.search(line)
    return int(said.group(1)) if said else 0


@pytest.mark.slow  # dozens of nlmsync processes
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_blocks_of_a_page_run_as_written(page: str, tmp_path: Path) -> None:
    home, env = _sandbox(tmp_path)
    for block in [b for b in BLOCKS if b.page == page and b.key not in NOT_RUN]:
        for before in BEFORE.get(block.key, []):
            done = subprocess.run(["bash", "-c", before], cwd=home, env=env, capture_output=True, text=True,
                                  timeout=600)
            assert done.returncode == 0, f"{block}: {before}: {done.stderr}"
        results = (_run_crontab(block, home, env) if block.language == "crontab"
                   else _run_shell(block, home, env, tmp_path))
        wrong = [(line, code, expected) for line, code, expected in results if code != expected]
        assert not wrong, f"{block}: (line, exit code, expected): {wrong}"
        if block.language == "crontab":  # the recipe's log: a line per run, each with its time, no error
            log = (home / ".local" / "state" / "nlmsync.log").read_text(encoding="utf-8").splitlines()
            assert log and all(CRON_LOG_LINE.match(line) and " exit " not in line for line in log), log
