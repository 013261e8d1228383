"""`benchmarks/corpora.py`, run by hand to fetch the benchmarks' corpora, says in one line why it cannot: no
network, or an archives folder without the files — never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "corpora.py"


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, **env}
    return subprocess.run([sys.executable, str(SCRIPT), "--to", str(tmp_path / "corpora"), *args],
                          capture_output=True, text=True, timeout=120, env=environment)


def test_offline_it_says_so_in_one_line(tmp_path: Path) -> None:
    # every request goes through a proxy nobody listens on: what a machine without a network meets
    done = _run(tmp_path, https_proxy="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", no_proxy="")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("corpora.py: cannot download https://codeload.github.com/tldr-pages/tldr/")
    assert "--archives DIR" in done.stderr and len(done.stderr.splitlines()) == 1


def test_an_archives_folder_without_the_files_is_named_in_one_line(tmp_path: Path) -> None:
    done = _run(tmp_path, "--archives", str(tmp_path / "nothing-here"))
    assert done.returncode == 1 and "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"corpora.py: cannot read {tmp_path / 'nothing-here' / 'tldr.tar.gz'}")
