"""Files the user names as input (`--config FILE`, `search --queries FILE`) are read with a bound: a device,
a FIFO, a folder or an oversized file is one line naming it, exit 2 — never gigabytes of memory or a wait for
ever."""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.cli_helpers import environment_without_settings, run_cli

from nlmsync.cli import main, searching
from nlmsync.config import CONFIG_FILE_LIMIT
from nlmsync.vault import read_input_file

MEMORY_CAP = 1 << 30
"""Address space a child process gets: enough for nlmsync, far less than reading a device to its end takes."""


def _one_error_line(err: str, *names: str) -> None:
    assert err.startswith("nlmsync: error: ") and err.count("\n") == 1, err
    assert all(name in err for name in names), err


def test_a_config_file_over_the_bound_is_refused(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = vault / "big.toml"
    config.write_bytes(b"# a comment\n" * (CONFIG_FILE_LIMIT // 12 + 1))  # valid TOML, only too large
    code, out, err = run_cli(capsys, "--vault", str(vault), "--config", str(config), "search", "heapsort")
    assert (code, out) == (2, "")
    _one_error_line(err, str(config), "config file", f"larger than {CONFIG_FILE_LIMIT:,} bytes")


def test_a_config_file_within_the_bound_is_read(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = vault / "ok.toml"
    config.write_bytes(b"# a comment\n" * (CONFIG_FILE_LIMIT // 24) + b"top_n = 1\n")
    code, out, _ = run_cli(capsys, "--vault", str(vault), "--config", str(config), "search", "heapsort",
                           "--json")
    assert code == 0 and out.count('"selected": true') == 1


@pytest.mark.parametrize("option", [["--config", "{path}", "search", "x"], ["search", "--queries", "{path}"]])
def test_a_fifo_is_refused_without_waiting_for_a_writer(vault: Path, tmp_path: Path,
                                                        option: list[str]) -> None:
    fifo = tmp_path / "input.fifo"
    os.mkfifo(fifo)
    args = ["--vault", str(vault), *(a.format(path=fifo) for a in option)]
    outcome: list[int] = []

    def run() -> None:
        try:
            main(args)
            outcome.append(0)
        except SystemExit as exc:
            outcome.append(int(exc.code or 0))

    runner = threading.Thread(target=run, daemon=True)  # a run that waits on the FIFO is left behind
    runner.start()
    runner.join(timeout=60)
    assert outcome == [2]


def test_a_folder_is_refused_as_a_config_file(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "--vault", str(vault), "--config", str(vault), "search", "x")
    assert code == 2
    _one_error_line(err, str(vault), "cannot read config file")


def test_a_queries_file_over_the_bound_is_refused(vault: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(searching, "QUERIES_FILE_LIMIT", 1000)
    queries = tmp_path / "q.txt"
    queries.write_text("heapsort\n" * 112, encoding="utf-8")  # 1,008 bytes
    code, out, err = run_cli(capsys, "--vault", str(vault), "search", "--queries", str(queries))
    assert (code, out) == (2, "")
    _one_error_line(err, str(queries), "queries file", "larger than 1,000 bytes")
    queries.write_text("heapsort\n" * 111, encoding="utf-8")
    code, out, _ = run_cli(capsys, "--vault", str(vault), "search", "--queries", str(queries))
    assert code == 0 and len(out.splitlines()) == 111


@pytest.mark.slow  # a process per case
@pytest.mark.parametrize(("args", "stdin", "named"), [
    (["--config", "/dev/zero", "search", "x"], None, "/dev/zero: cannot read config file"),
    (["--config", "/dev/urandom", "search", "x"], None, "/dev/urandom: cannot read config file"),
    (["search", "--queries", "/dev/zero"], None, "/dev/zero: cannot read queries file"),
    (["search", "--queries", "-"], "/dev/zero", "-: cannot read queries file"),
])
def test_an_endless_device_is_refused_within_bounded_memory(vault: Path, args: list[str], stdin: str | None,
                                                            named: str) -> None:
    def cap_memory() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))

    with open(stdin or os.devnull, "rb") as given:
        done = subprocess.run([sys.executable, "-m", "nlmsync", "--vault", str(vault), *args], stdin=given,
                              capture_output=True, text=True, timeout=120, preexec_fn=cap_memory,
                              env=environment_without_settings(), check=False)
    assert (done.returncode, done.stdout) == (2, "")
    _one_error_line(done.stderr, named)


def test_read_input_file_reads_a_regular_file_whole_and_nothing_else(tmp_path: Path) -> None:
    note = tmp_path / "q.txt"
    note.write_bytes(b"x" * 10)
    assert read_input_file(note, 10) == b"x" * 10
    with pytest.raises(OSError, match="larger than 9 bytes"):
        read_input_file(note, 9)
    with pytest.raises(OSError, match="not a regular file"):
        read_input_file("/dev/null", 10)
    with pytest.raises(IsADirectoryError):
        read_input_file(tmp_path, 10)
    with pytest.raises(FileNotFoundError):
        read_input_file(tmp_path / "missing", 10)


def test_a_queries_file_gives_one_json_line_per_query_read_from_a_file_or_stdin(
        vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    queries = tmp_path / "q.txt"
    queries.write_bytes("\ufeffheapsort\n\n  crème brûlée  \n".encode())  # a BOM, a blank line, spaces around
    code, out, err = run_cli(capsys, "--vault", str(vault), "search", "--queries", str(queries))
    assert (code, err) == (0, "")
    assert "crème brûlée" in out  # written as typed, not as \u escapes
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(list(line)[0], line["query"]) for line in lines] == [("schema_version", "heapsort"),
                                                                 ("schema_version", "crème brûlée")]
    assert lines[0]["results"] and lines[0]["results"][0]["path"].endswith(".md")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"heapsort\n")))
    code, out, _ = run_cli(capsys, "--vault", str(vault), "search", "--queries", "-")
    assert code == 0 and [json.loads(line)["query"] for line in out.splitlines()] == ["heapsort"]


def test_a_queries_file_missing_or_not_utf8_is_one_line_naming_it(vault: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "none.txt"
    code, out, err = run_cli(capsys, "--vault", str(vault), "search", "--queries", str(missing))
    assert (code, out, err) == (2, "", f"nlmsync: error: {missing}: queries file not found\n")
    latin = tmp_path / "latin.txt"
    latin.write_bytes(b"heapsort\ncr\xe8me\n")
    code, out, err = run_cli(capsys, "--vault", str(vault), "search", "--queries", str(latin))
    assert (code, out, err) == (2, "", f"nlmsync: error: {latin}: queries file is not valid UTF-8 (byte 11)\n")


def test_stdin_over_the_bound_is_refused_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    import errno
    import io

    from nlmsync.cli import searching
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"q\n" * 5)))
    with pytest.raises(OSError, match="larger than 9 bytes") as refused:
        searching._read_stdin(9)
    assert refused.value.errno == errno.EFBIG
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"q\n" * 5)))
    assert searching._read_stdin(10) == b"q\n" * 5
