"""`nlmsync index` and `nlmsync search` end to end (in process): output shapes, JSON purity, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.cli_helpers import run_cli as run


def test_index_json_reports_counts_and_skipped(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "index", "--json")
    assert code == 0 and err == ""
    report = json.loads(out)
    assert report["indexed_count"] == 26 and report["added_count"] == 26
    assert {"path": "quirks/latin1.md", "reason": "invalid utf-8 (byte 5)"} in report["skipped_notes"]
    code, out, _ = run(capsys, "--vault", str(vault), "index", "--json")
    again = json.loads(out)
    assert (again["added_count"], again["updated_count"], again["unchanged_count"]) == (0, 0, 26)


def test_index_counts_add_up_to_the_notes_indexed(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every indexed note is added, updated or unchanged; a skipped note is none of these, whether it stays
    skipped, becomes a note, or a note becomes one."""
    def index() -> dict[str, int]:
        code, out, _ = run(capsys, "--vault", str(vault), "index", "--json")
        assert code == 0
        report = json.loads(out)
        assert report["indexed_count"] == report["added_count"] + report["updated_count"] + report["unchanged_count"]
        return report

    first, idle = index(), index()
    assert (first["added_count"], idle["unchanged_count"]) == (26, 26)
    (vault / "quirks" / "empty.md").write_text("# Not empty any more\n", encoding="utf-8")
    (vault / "inbox.md").write_text("", encoding="utf-8")
    with (vault / "Home.md").open("a", encoding="utf-8") as home:
        home.write("\nOne more line.\n")
    changed = index()
    assert (changed["added_count"], changed["updated_count"], changed["removed_count"]) == (1, 1, 1)
    assert changed["indexed_count"] == 26 and changed["unchanged_count"] == 24


def test_index_text_lists_skipped_notes(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "index")
    assert code == 0
    assert "Indexed 26 notes" in out
    assert "quirks/binary-image.md — binary" in out


def test_search_json_is_one_document(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), "search", "How does heapsort work?", "--json", "--limit", "4")
    assert code == 0 and err == ""
    document = json.loads(out)
    results = document["results"]
    assert len(results) == 4
    first = results[0]
    assert first["path"] == "algorithms/sorting/heapsort.md" and first["selected"] is True
    assert "heapsort" in first["matched_terms"]
    assert "heapsort" in first["snippet"].lower() and len(first["snippet"]) <= 300
    assert [r["score"] for r in results] == sorted((r["score"] for r in results), reverse=True)


def test_matched_terms_are_the_querys_words_as_written(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "search", "How does a Heap Sort work?", "--json", "--limit", "4")
    assert code == 0
    matched = {result["path"]: result["matched_terms"] for result in json.loads(out)["results"]}
    assert matched["algorithms/sorting/heapsort.md"] == ["How does", "Heap Sort", "work"]
    assert matched["algorithms/complexity.md"] == ["Heap Sort"]  # it writes `heapsort`: the compound matched
    code, out, _ = run(capsys, "--vault", str(vault), "search", "How does a Heap Sort work?", "--limit", "1")
    assert out.splitlines()[0].endswith("How does, Heap Sort, work")


def test_search_text_marks_selected(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--vault", str(vault), "search", "김치찌개")
    assert code == 0
    assert out.splitlines()[0].startswith("1. ✓ cooking/kimchi-jjigae.md")
    code, out, _ = run(capsys, "--vault", str(vault), "search", "xylophone")
    assert code == 0 and "No notes match" in out


def test_search_queries_file_writes_json_lines(vault: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.txt"
    queries.write_text("heap sort\n\nヒープソート\nE = mc²\n", encoding="utf-8")
    code, out, err = run(capsys, "--vault", str(vault), "search", "--queries", str(queries), "--limit", "2")
    assert code == 0 and err == ""
    lines = [json.loads(line) for line in out.splitlines()]
    assert [doc["query"] for doc in lines] == ["heap sort", "ヒープソート", "E = mc²"]
    assert [doc["results"][0]["path"] for doc in lines] == [
        "algorithms/sorting/heapsort.md", "アルゴリズム/ヒープソート.md", "physics/formulas.md"]


@pytest.mark.parametrize("argv", [
    ("search",),
    ("search", "   "),
    ("search", "x", "--queries", "q.txt"),
])
def test_bad_usage_exits_2(vault: Path, capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out, err = run(capsys, "--vault", str(vault), *argv)
    assert code == 2 and out == ""
    assert err.startswith("nlmsync: error: ")


def test_bad_queries_file_names_the_file(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9\n")
    code, out, err = run(capsys, "--vault", str(vault), "search", "--queries", str(bad))
    assert code == 2 and out == ""
    assert f"{bad}: queries file is not valid UTF-8" in err
    code, _, err = run(capsys, "--vault", str(vault), "search", "--queries", str(tmp_path / "none.txt"))
    assert code == 2 and "none.txt: queries file not found" in err


def test_missing_vault_and_corrupt_state(vault: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "--vault", str(tmp_path / "nope"), "index")
    assert code == 2 and "nope: the vault does not exist" in err
    state = tmp_path / "broken.db"
    state.write_bytes(b"this is not sqlite at all" * 100)
    code, out, err = run(capsys, "--vault", str(vault), "--state", str(state), "search", "heap", "--json")
    assert code == 2 and "results" not in json.loads(out) and json.loads(out)["exit_code"] == 2
    assert str(state) in err
    assert state.read_bytes() == b"this is not sqlite at all" * 100


def test_ctrl_c_during_a_search_exits_130_and_says_so(vault: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """click turns a KeyboardInterrupt into an abort; a script must not see success (0)."""
    from nlmsync.search.index import NoteIndex

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(NoteIndex, "search", interrupted)
    code, out, err = run(capsys, "--vault", str(vault), "search", "heapsort", "--json")
    assert code == 130 and json.loads(out) == {"schema_version": 1, "error": "interrupted", "exit_code": 130,
                                               "hint": None}
    assert err == "nlmsync: error: interrupted\n"


def test_a_file_name_that_is_not_utf8_is_skipped_and_the_vault_still_works(
        vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / "latin1-\udce9.md").write_text("# Latin\nheapsort")  # the name's byte 0xE9 on disk
    code, out, err = run(capsys, "--vault", str(vault), "index", "--json")
    assert (code, err) == (0, "")
    assert {"path": "latin1-\\xe9.md", "reason": "invalid file name encoding"} in json.loads(out)["skipped_notes"]
    code, out, err = run(capsys, "--vault", str(vault), "search", "heapsort", "--json")
    assert (code, err) == (0, "")
    assert json.loads(out)["results"][0]["path"] == "algorithms/sorting/heapsort.md"
    code, out, _ = run(capsys, "--vault", str(vault), "index")
    assert code == 0 and "latin1-\\xe9.md — invalid file name encoding" in out


def test_control_characters_in_file_names_are_shown_escaped(vault: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (vault / "evil\x1b[2J\nname.md").write_text("# Evil\nzanzibar")
    (vault / "blank\x1b[31m.md").write_text(" \n")
    code, out, _ = run(capsys, "--vault", str(vault), "search", "zanzibar")
    assert code == 0 and "\x1b" not in out
    assert out.splitlines()[0].startswith("1. ✓ evil\\x1b[2J\\nname.md")
    code, out, _ = run(capsys, "--vault", str(vault), "index")
    assert code == 0 and "\x1b" not in out and "  blank\\x1b[31m.md — empty" in out
    code, out, _ = run(capsys, "--vault", str(vault), "search", "zanzibar", "--json")
    assert json.loads(out)["results"][0]["path"] == "evil\x1b[2J\nname.md"


def test_two_names_that_normalize_alike_index_one_and_skip_the_other(vault: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """A vault synced between macOS (NFD names) and Linux can hold `café.md` twice, composed and decomposed."""
    import unicodedata

    composed, decomposed = unicodedata.normalize("NFC", "café.md"), unicodedata.normalize("NFD", "café.md")
    (vault / "cooking" / composed).write_text("# Café\n\nespresso zeppelin\n", encoding="utf-8")
    (vault / "cooking" / decomposed).write_text("# Café\n\nlatte zeppelin\n", encoding="utf-8")
    for _ in range(2):  # every run, not only the first
        code, out, err = run(capsys, "--vault", str(vault), "index", "--json")
        assert code == 0, err
        skipped = [s for s in json.loads(out)["skipped_notes"] if "normalization" in s["reason"]]
        assert [s["reason"] for s in skipped] == [f"duplicate of cooking/{composed} after Unicode normalization"]
        code, out, err = run(capsys, "--vault", str(vault), "search", "zeppelin", "--json")
        assert code == 0, err
        assert [h["path"] for h in json.loads(out)["results"]] == [f"cooking/{composed}"]


@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_a_vault_where_the_state_file_cannot_be_made_is_still_searched(vault: Path, json_flag: list[str],
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A read-only vault (a mounted share, a checkout owned by someone else): searching needs no state file."""
    import errno

    mkdir = Path.mkdir

    def read_only(self: Path, *args: object, **kwargs: object) -> None:
        if self.name == ".nlmsync":
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        mkdir(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "mkdir", read_only)
    code, out, err = run(capsys, "--vault", str(vault), "search", "heapsort", *json_flag)
    assert code == 0, err
    assert "algorithms/sorting/heapsort.md" in out
    assert err.startswith("nlmsync: note: searching without the state file") and "Read-only file system" in err
    assert len(err.splitlines()) == 1 and not (vault / ".nlmsync").exists()
    code, out, err = run(capsys, "--vault", str(vault), "index")  # index's job is the state file: it says so
    assert code == 2 and "Read-only file system" in err
