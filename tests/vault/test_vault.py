"""Files on disk: canonical paths, the vault walk, reading, confinement, front matter, exclusion."""

from __future__ import annotations

import ast
import errno
import os
import re
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Self

import pytest
from tests.deep_folders import nested_folders

import nlmsync
from nlmsync.errors import InputError, PathOutsideVaultError
from nlmsync.vault import (
    check_exclude,
    decode_note,
    excluded_by_pattern,
    front_matter_strings,
    is_blank,
    is_excluded,
    is_note_path,
    list_vault,
    matches_exclude,
    normalize_rel_path,
    parse_front_matter,
    read_file_bytes,
    read_note_text,
    resolve_in_vault,
    scan_vault,
)


def test_normalize_rel_path() -> None:
    assert normalize_rel_path("./notes//a.md") == "notes/a.md"
    assert normalize_rel_path("notes\\sub\\a.md") == "notes/sub/a.md"
    assert normalize_rel_path(unicodedata.normalize("NFD", "café.md")) == unicodedata.normalize("NFC", "café.md")


def test_is_note_path() -> None:
    assert is_note_path("a/b.md")
    assert is_note_path("a/B.MD")
    assert not is_note_path("a/b.txt")
    assert not is_note_path(".obsidian/workspace.md")
    assert not is_note_path("x/.trash/old.md")


def test_scan_fixture_vault(vault: Path) -> None:
    scan = scan_vault(vault)
    paths = [n.path for n in scan.notes]
    assert paths == sorted(paths)
    assert "algorithms/sorting/heapsort.md" in paths
    assert "アルゴリズム/ヒープソート.md" in paths
    assert not any(p.startswith(".obsidian/") for p in paths)
    assert {(s.path, s.reason) for s in scan.skipped} == {("quirks/empty.md", "empty")}
    note = next(n for n in scan.notes if n.path == "inbox.md")
    assert note.size == (vault / "inbox.md").stat().st_size


def test_scan_skips_state_and_trash_folders(vault: Path) -> None:
    for folder in (".nlmsync", ".trash", ".git"):
        (vault / folder).mkdir(exist_ok=True)
        (vault / folder / "x.md").write_text("hidden")
    assert not any(n.path.split("/")[0] in (".nlmsync", ".trash", ".git") for n in scan_vault(vault).notes)


def test_scan_of_a_missing_vault_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        scan_vault(tmp_path / "nope")


def test_scan_symlinks(vault: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.md").write_text("outside")
    (vault / "loop").symlink_to(vault)
    (vault / "algorithms" / "again").symlink_to(vault / "cooking")
    (vault / "out").symlink_to(outside)
    (vault / "inside-link.md").symlink_to(vault / "inbox.md")
    (vault / "dangling.md").symlink_to(vault / "missing.md")
    scan = scan_vault(vault)
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["loop"] == "symlink loop"
    assert reasons["out"] == "outside vault (symlink)"
    assert reasons["dangling.md"] == "broken symlink"
    assert reasons["cooking"] == "folder already indexed through another link"
    assert "algorithms/again/sourdough.md" in [n.path for n in scan.notes]
    assert "inside-link.md" in [n.path for n in scan.notes]


def test_read_note_text_errors_name_the_note(vault: Path) -> None:
    assert read_note_text(vault, "inbox.md").startswith("# Inbox")
    with pytest.raises(InputError, match=r"^quirks/binary-image.md: .*binary"):
        read_note_text(vault, "quirks/binary-image.md")
    with pytest.raises(InputError, match=r"^quirks/latin1.md: .*invalid utf-8"):
        read_note_text(vault, "quirks/latin1.md")
    with pytest.raises(InputError, match=r"^nope.md: note not found"):
        read_note_text(vault, "nope.md")
    assert read_note_text(vault, "quirks/empty.md") == ""


def test_read_note_text_drops_a_bom(vault: Path) -> None:
    (vault / "bom.md").write_bytes(b"\xef\xbb\xbf# Title")
    assert read_note_text(vault, "bom.md") == "# Title"


def test_resolve_in_vault_refuses_escapes(vault: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("x")
    (vault / "link.md").symlink_to(tmp_path / "secret.md")
    for bad in ("../secret.md", "/etc/passwd", "notes/../../x.md", "link.md", "C:/x.md"):
        with pytest.raises(PathOutsideVaultError):
            resolve_in_vault(vault, bad)
    assert resolve_in_vault(vault, "./cooking/sourdough.md") == vault / "cooking" / "sourdough.md"


def test_resolve_finds_an_nfd_name_by_its_nfc_path(vault: Path) -> None:
    nfd = unicodedata.normalize("NFD", "résumé.md")
    (vault / nfd).write_text("cv")
    nfc = unicodedata.normalize("NFC", "résumé.md")
    assert read_note_text(vault, nfc) == "cv"
    assert [n.path for n in scan_vault(vault).notes if n.path.startswith("r\u00e9")] == [nfc]


def test_front_matter() -> None:
    text = "---\ntitle: \"Heap: notes\"\naliases: [a, 'b c']\ntags:\n  - x\n  - y\nnlmsync: false\ncount: 3\n---\nbody"
    front = parse_front_matter(text)
    assert front.data == {"title": "Heap: notes", "aliases": ["a", "b c"], "tags": ["x", "y"], "nlmsync": False,
                          "count": "3"}
    assert text[front.body_start:] == "body"


def test_front_matter_is_read_as_yaml() -> None:
    """Quoting, escapes, block scalars and nested values as YAML has them (the hand-written subset kept `''`
    doubled, `\\_` escaped, and read a block scalar's `|` as the value)."""
    text = ("---\ndescription: 'Apreneu d''Obsidian'\nsummary: \"non\\_breaking\"\nabstract: |\n  two\n  lines\n"
            "author: {name: Mina, links: [a, b]}  # a comment\n...\nbody")
    front = parse_front_matter(text)
    assert front.data == {"description": "Apreneu d'Obsidian", "summary": "non\u00a0breaking",
                          "abstract": "two\nlines\n", "author": {"name": "Mina", "links": ["a", "b"]}}
    assert text[front.body_start:] == "body"
    assert front_matter_strings(front.data["author"]) == ["Mina", "a", "b"]
    assert front_matter_strings([None, 1, [True, {"k": "v"}]]) == ["1", "True", "v"]


@pytest.mark.parametrize(("raw", "value"), [
    ("12:30", "12:30"), ("010", "010"), ("1.10", "1.10"), ("2024-01-01", "2024-01-01"), ("0x1F", "0x1F"),
    ("yes", True), ("Off", False), ("false", False), ("~", None), ("", None), ("'no'", "no"),
])
def test_plain_scalars_are_booleans_null_or_the_string_as_written(raw: str, value: object) -> None:
    """YAML 1.1 would read `12:30` as 750 and `010` as 8; front matter is searched as text, so a scalar that
    is not a boolean or null stays as written."""
    assert parse_front_matter(f"---\nkey: {raw}\n---\n").data == {"key": value}


def test_front_matter_that_is_not_a_yaml_mapping_gives_no_data_but_keeps_an_opt_out() -> None:
    broken = "---\ntitle: Heap: notes\ntags: [x\n{flag}---\nbody"
    assert parse_front_matter(broken.format(flag="")).data == {}
    assert parse_front_matter(broken.format(flag="")).body_start == len(broken.format(flag="")) - len("body")
    opted_out = broken.format(flag="nlmsync: No  # private\n")
    assert parse_front_matter(opted_out).data == {"nlmsync": False}
    assert is_excluded("n.md", opted_out, [])
    assert not is_excluded("n.md", broken.format(flag="  nlmsync: false\n"), [])  # not at the top level
    assert not is_excluded("n.md", broken.format(flag="NLMSYNC: false\n"), [])  # keys are case-sensitive
    assert parse_front_matter("---\n- a list\n---\nbody").data == {}
    assert parse_front_matter("---\njust words\n---\nbody").data == {}


@pytest.mark.parametrize(("raw", "value"), [
    ("!!int 0x1F", "0x1F"), ("!!float 1e999", "1e999"), ("!!timestamp 2001-99-99", "2001-99-99"),
    ("!!binary aGk=", "aGk="), ("!!str yes", "yes"), ("!!bool yes", True),
])
def test_explicit_tags_give_the_string_as_written_or_a_boolean(raw: str, value: object) -> None:
    """A value is a string, boolean, null, list or mapping: PyYAML's `!!int abc` or `!!timestamp 2001-99-99`
    would raise ValueError, and an `!!int` of 20,000 hex digits cannot even be printed."""
    assert parse_front_matter(f"---\nkey: {raw}\n---\n").data == {"key": value}


@pytest.mark.slow  # pathological YAML, each parsed by both loaders
def test_hostile_front_matter_neither_raises_nor_blows_up() -> None:
    """Untrusted notes: nesting deep enough to overflow libyaml's C recursion (the process died), aliases
    that refer to themselves or multiply (nine to the eighth strings), and tags PyYAML's constructors choke on."""
    deep = "---\na: " + "[" * 100_000 + "]" * 100_000 + "\nnlmsync: false\n---\nbody"
    assert parse_front_matter(deep).data == {"nlmsync": False}  # not valid YAML in Python's loader: too deep
    assert parse_front_matter("---\ntags:\n" + "- " * 100_000 + "x\n---\nbody").data == {}
    looped = parse_front_matter("---\na: &a [x, *a]\n---\nbody").data
    assert front_matter_strings(looped["a"]) == ["x"]
    tower = "l0: &l0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 9))
    data = parse_front_matter(f"---\n{tower}---\nbody").data
    assert front_matter_strings(data["l8"]) == ["x"] * 9
    assert parse_front_matter("---\ntitle: ok\nflag: !!bool maybe\n---\nbody").data == {}


def test_importing_the_vault_or_reading_a_note_without_front_matter_does_not_load_yaml() -> None:
    code = ("import sys\nfrom nlmsync.vault import parse_front_matter\n"
            "assert parse_front_matter('# title\\nbody').data == {}\nprint('yaml' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_front_matter_absent_or_unclosed() -> None:
    assert parse_front_matter("# Title\n---\n").data == {}
    assert parse_front_matter("---\ntitle: x\nno end").body_start == 0
    assert parse_front_matter("").data == {}


def test_is_excluded() -> None:
    assert is_excluded("private/a.md", None, ["private"])
    assert is_excluded("a/private/b.md", None, ["private"])
    assert is_excluded("journal/2025-01-01.md", None, ["journal/2025-*"])
    assert not is_excluded("journal/2026-01-01.md", None, ["journal/2025-*"])
    assert is_excluded("x/y/z.draft.md", None, ["*.draft.md"])
    assert is_excluded("x/y/z.md", None, ["x/**"])
    assert is_excluded("deep/x/y/z.md", None, ["**/y/*.md"])
    assert is_excluded("n.md", "---\nnlmsync: false\n---\nhi", [])
    assert not is_excluded("n.md", "---\nnlmsync: true\n---\nhi", [])
    assert not is_excluded("n.md", "nlmsync: false", [])


def test_exclude_patterns_ignore_letter_case() -> None:
    # on a case-insensitive file system Private/x.md is private/x.md: it must not slip past the pattern
    assert matches_exclude("Private/diary.md", ["private/**"])
    assert matches_exclude("notes/Secret.DRAFT.md", ["*.draft.md"])


def test_exclude_patterns_are_gitignore_patterns() -> None:
    """pathspec reads the globs as gitignore does: classes, a `!` pattern taking a match back, comments, and
    `**` spanning folders only as a whole path part (the hand-written translator read `[`, `!` and `#` as
    letters and let `a**` cross folders)."""
    assert matches_exclude("notes/2024-b.md", ["notes/2024-[ab].md"])
    assert not matches_exclude("notes/2024-c.md", ["notes/2024-[ab].md"])
    assert matches_exclude("Private/diary.md", ["private/**", "!private/keep.md"])
    assert not matches_exclude("private/Keep.md", ["private/**", "!private/keep.md"])
    assert not matches_exclude("#draft.md", ["#draft.md"])  # a comment, as in .gitignore
    assert not matches_exclude("drafts/x/y.md", ["drafts**/y.md"])
    assert matches_exclude("drafts-old/y.md", ["drafts**/y.md"])
    assert matches_exclude("a.md", ["a.md  "])  # trailing spaces are not part of a pattern
    assert matches_exclude("deep/private/x.md", ["/private/"])  # a vault path: leading and trailing `/` dropped
    with pytest.raises(ValueError, match="Invalid git pattern: '!'"):
        check_exclude(["ok/**", "!"])
    check_exclude(["[[]x.md"])  # no warning from the re module either (warnings are errors here)
    assert matches_exclude("[x.md", ["[[]x.md"])


@pytest.mark.slow  # a process boundary: a subprocess or server start per test
def test_a_vault_without_exclude_patterns_does_not_load_pathspec() -> None:
    code = ("import sys\nfrom nlmsync.config import Settings\nfrom nlmsync.vault import is_excluded\n"
            "assert not is_excluded('a.md', 'text', Settings().exclude)\nprint('pathspec' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr


def test_a_link_does_not_carry_an_excluded_note_past_the_patterns(vault: Path) -> None:
    (vault / "private").mkdir(exist_ok=True)
    (vault / "private" / "plans.md").write_text("# Plans\nsecret plans\n", encoding="utf-8")
    (vault / "public.md").symlink_to(vault / "private" / "plans.md")
    (vault / "shared").symlink_to(vault / "private")
    for path in ("public.md", "shared/plans.md"):
        assert excluded_by_pattern(vault, path, ["private/**"])
        assert is_excluded(path, "secret plans", ["private/**"], root=vault)
    assert not excluded_by_pattern(vault, "inbox.md", ["private/**"])


def test_scan_skips_links_into_folders_never_indexed(vault: Path) -> None:
    (vault / ".obsidian" / "workspace.md").write_text("# ui state\n", encoding="utf-8")
    (vault / "settings.md").symlink_to(vault / ".obsidian" / "workspace.md")
    (vault / "config").symlink_to(vault / ".obsidian")
    scan = scan_vault(vault)
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["settings.md"] == "symlink into .obsidian/"
    assert reasons["config"] == "symlink into .obsidian/"
    assert not any(n.path in ("settings.md",) or n.path.startswith("config/") for n in scan.notes)


def test_walk_finds_notes_under_nfd_names_on_disk_and_one_of_two_that_normalize_alike(vault: Path) -> None:
    nfd_folder, nfd_note = unicodedata.normalize("NFD", "café"), unicodedata.normalize("NFD", "crème.md")
    (vault / nfd_folder).mkdir()
    (vault / nfd_folder / "menu.md").write_text("espresso")
    (vault / nfd_folder / nfd_note).write_text("brûlée")
    (vault / "twin").mkdir()
    (vault / "twin" / unicodedata.normalize("NFC", "é.md")).write_text("composed")
    (vault / "twin" / unicodedata.normalize("NFD", "é.md")).write_text("decomposed")
    listing = list_vault(vault)
    notes = {listing.note(i).path: listing.note(i) for i in range(len(listing.paths))}
    cafe = unicodedata.normalize("NFC", "café")
    for rel in (f"{cafe}/menu.md", f"{cafe}/{unicodedata.normalize('NFC', 'crème.md')}"):
        assert Path(notes[rel].fs_path).is_file(), rel  # the NFD name on disk, found by its NFC path
    twin = unicodedata.normalize("NFC", "twin/é.md")
    assert Path(notes[twin].fs_path).is_file()
    assert [s.reason for s in listing.skipped if s.path == twin] == []  # the kept note's path is not a skip
    (skip,) = [s for s in listing.skipped if s.path.startswith("twin/")]
    assert skip.reason == f"duplicate of {twin} after Unicode normalization" and (vault / skip.path).is_file()
    assert sorted(listing.paths) == [n.path for n in scan_vault(vault).notes]
    assert len(listing.paths) == len(set(listing.paths))
    plain = notes["cooking/sourdough.md"]
    assert Path(plain.fs_path).samefile(vault / "cooking" / "sourdough.md")


def test_a_name_that_is_not_utf8_is_skipped_with_its_bytes_shown(vault: Path) -> None:
    # os.fsdecode gives a name's stray byte 0xE9 as the lone surrogate U+DCE9: what the walk meets on disk
    (vault / "latin1-\udce9.md").write_text("# Latin\nheapsort")
    (vault / "dir-\udce9").mkdir()
    (vault / "dir-\udce9" / "inside.md").write_text("# Inside")
    (vault / "valid-link.md").symlink_to(vault / "latin1-\udce9.md")
    scan = scan_vault(vault)
    reasons = {s.path: s.reason for s in scan.skipped}
    assert reasons["latin1-\\xe9.md"] == "invalid file name encoding"
    assert reasons["dir-\\xe9"] == "invalid file name encoding"
    paths = [n.path for n in scan.notes]
    assert "valid-link.md" in paths and "inbox.md" in paths
    for path in [*paths, *reasons]:
        path.encode("utf-8")  # every path the walk hands over can be stored and printed


def test_a_symlink_loop_between_two_notes_is_reported(vault: Path) -> None:
    (vault / "a.md").symlink_to(vault / "b.md")
    (vault / "b.md").symlink_to(vault / "a.md")
    reasons = {s.path: s.reason for s in scan_vault(vault).skipped}
    assert (reasons["a.md"], reasons["b.md"]) == ("symlink loop", "symlink loop")


@pytest.mark.parametrize(("path", "why"), [
    ("notes/a\x00.md", "NUL byte"),
    ("latin1-\udce9.md", "latin1-\\xe9.md: invalid file name encoding"),
    ("lone-\ud800.md", "lone-\\ud800.md: invalid file name encoding"),
])
def test_resolve_in_vault_refuses_nul_bytes_and_names_that_are_not_utf8(vault: Path, path: str, why: str) -> None:
    with pytest.raises(PathOutsideVaultError, match=re.escape(why)) as caught:
        resolve_in_vault(vault, path)
    str(caught.value).encode("utf-8")


@pytest.mark.parametrize(("data", "text", "problem"), [
    (b"# Title\n", "# Title\n", None),
    (b"\xef\xbb\xbf# Title", "# Title", None),
    (b"", "", "empty"),
    (b" \n\t\r\n\xe2\x80\x83", " \n\t\r\n\u2003", "empty"),
    (b"\xef\xbb\xbf \n", " \n", "empty"),
    (b"ok\x00", "", "binary"),
    (b"\xef\xbb\xbfab\xff", "", "invalid utf-8 (byte 5)"),
])
def test_decode_note_is_the_one_rule_for_unreadable_and_empty_notes(data: bytes, text: str,
                                                                   problem: str | None) -> None:
    assert decode_note(data) == (text, problem)
    if problem in (None, "empty"):
        assert is_blank(text) == (problem == "empty")


def _write(root: Path, *rel_paths: str) -> None:
    for rel in rel_paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n", encoding="utf-8")


def test_a_folder_lists_its_own_notes_first_then_its_folders_by_name(tmp_path: Path) -> None:
    _write(tmp_path, "b.md", "a.md", "zeta/z.md", "alpha/deeper/d.md", "alpha/a.md", "mid/m.md")
    listing = list_vault(tmp_path)
    assert sorted(listing.paths[:2]) == ["a.md", "b.md"]  # in the order the file system lists them
    assert listing.paths[2:] == ["alpha/a.md", "alpha/deeper/d.md", "mid/m.md", "zeta/z.md"]
    for path, mtime, size in zip(listing.paths, listing.mtimes, listing.sizes, strict=True):
        on_disk = (tmp_path / path).stat()
        assert (mtime, size) == (on_disk.st_mtime_ns, on_disk.st_size)
    assert (listing.skipped, listing.renamed) == ([], {})


def test_a_note_is_a_regular_file_named_md_in_any_letter_case(tmp_path: Path) -> None:
    _write(tmp_path, "A.MD", "b.Md", "c.txt", "folder.md/inner.md")
    (tmp_path / "empty.MD").write_bytes(b"")
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "pipe.md")  # neither a note nor worth a reason: not a file to read
    listing = list_vault(tmp_path)
    assert sorted(listing.paths) == ["A.MD", "b.Md", "folder.md/inner.md"]
    assert [(s.path, s.reason) for s in listing.skipped] == [("empty.MD", "empty")]


class _FailsAfterFirst:
    """A folder's listing that hands over its first entry by name, then fails as a failing disk does."""

    def __init__(self, entries: Iterator[os.DirEntry[str]]) -> None:
        with entries:  # type: ignore[attr-defined]
            self._entries = iter(sorted(entries, key=lambda e: e.name)[:1])

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def __iter__(self) -> _FailsAfterFirst:
        return self

    def __next__(self) -> os.DirEntry[str]:
        for entry in self._entries:
            return entry
        raise OSError(errno.EIO, os.strerror(errno.EIO))


def test_a_folder_that_fails_part_way_keeps_the_notes_read_and_is_reported(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tmp_path, "top.md", "broken/a.md", "broken/b.md", "broken/sub/c.md", "fine/d.md")
    broken = (tmp_path / "broken").stat().st_ino
    scandir = os.scandir

    def failing_scandir(target: Any) -> Any:
        entries = scandir(target)
        folder = os.fstat(target) if isinstance(target, int) else os.stat(target)
        return _FailsAfterFirst(entries) if folder.st_ino == broken else entries

    monkeypatch.setattr(os, "scandir", failing_scandir)
    listing = list_vault(tmp_path)
    assert sorted(listing.paths) == ["broken/a.md", "fine/d.md", "top.md"]  # b.md unread, sub/ never entered
    assert [(s.path, s.reason) for s in listing.skipped] == [
        ("broken", f"unreadable folder ({os.strerror(errno.EIO)})")]


@pytest.mark.parametrize("length", [0, 1, 7, 65_535, 65_536, 200_001])
@pytest.mark.parametrize("stated", ["exact", "none", "smaller", "larger"])
def test_read_file_bytes_reads_the_whole_file_whatever_size_was_stated(tmp_path: Path, length: int,
                                                                      stated: str) -> None:
    """The stated size only sizes the first read: a file that grew or shrank since its stat is read whole."""
    data = bytes(range(256)) * (length // 256) + b"x" * (length % 256)
    path = tmp_path / "note.md"
    path.write_bytes(data)
    size = {"exact": length, "none": 0, "smaller": length // 3, "larger": length * 2 + 5}[stated]
    assert read_file_bytes(path, size) == data
    assert read_file_bytes(str(path), size) == data


def test_read_file_bytes_raises_oserror_for_a_folder_or_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError):
        read_file_bytes(tmp_path, 10)
    with pytest.raises(FileNotFoundError):
        read_file_bytes(tmp_path / "gone.md", 10)


def test_the_note_suffix_and_the_ignored_folders_are_defined_once() -> None:
    """What a note is and which folders are never read is said in `vault/paths.py` alone: the walk, the
    watch, the registry, the tokenizer and the server all read it from there."""
    src = Path(nlmsync.__file__).parent
    spelled = {".md", ".nlmsync", ".obsidian", ".trash", ".git"}
    found = []
    for path in sorted(src.rglob("*.py")):
        if path == src / "vault" / "paths.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in spelled:
                found.append(f"{path.relative_to(src)}:{node.lineno}: {node.value!r}")
    assert found == []


@pytest.mark.parametrize(("front", "out"), [
    ("nlmsync: false", True), ("'nlmsync': off", True), ('"nlm\\x73ync": no', True),  # a key spelled with escapes
    ("? nlmsync\n: false", True), ("title: nlmsync: false", False),
    ("nlmsync: true", False), ("title: Heap\ntags: [a, b]", False), ("x: 'nlm sync: false'", False),
])
def test_a_note_opts_out_whether_or_not_its_yaml_is_read(tmp_path: Path, front: str, out: bool, monkeypatch) -> None:
    """The admission rule reads a note's YAML only when its front matter could opt it out (it names nlmsync or
    holds an escape); read or not, the answer is the YAML's, and the server's rule (`exclusion_reason`) agrees."""
    from nlmsync.text import admit_note, front_matter, opted_out
    from nlmsync.vault import EXCLUDED_BY_FRONT_MATTER

    text = f"---\n{front}\n---\n# Note\n\nbody\n"
    (tmp_path / "n.md").write_text(text, encoding="utf-8")
    assert opted_out(parse_front_matter(text)) is out
    parsed: list[str] = []
    parse = front_matter._mapping

    def counted(block: str) -> dict[str, object]:
        parsed.append(block)
        return parse(block)

    monkeypatch.setattr(front_matter, "_mapping", counted)
    admitted = admit_note(tmp_path, "n.md", ())
    assert (admitted.refused == EXCLUDED_BY_FRONT_MATTER) is out and is_excluded("n.md", text, []) is out
    assert bool(parsed) is front_matter.may_opt_out(text)
    if "nlmsync" not in front and "\\" not in front:
        assert parsed == [] and admitted.front is None  # taken without its YAML read
    if not out:  # a note taken with its front matter asked for (as the index asks) has it read
        assert admit_note(tmp_path, "n.md", (), with_front=True).front == parse_front_matter(text)


def test_a_vault_deeper_than_the_recursion_limit_is_walked(tmp_path: Path) -> None:
    (tmp_path / "top.md").write_text("# Top\n", encoding="utf-8")
    with nested_folders(tmp_path, sys.getrecursionlimit() + 100, "d", "deep.md") as deep:
        listing = list_vault(tmp_path)
        assert (listing.paths, listing.skipped) == (["top.md", deep], [])


def test_a_folder_whose_path_is_longer_than_the_system_takes_is_skipped_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "top.md").write_text("# Top\n", encoding="utf-8")
    longest = os.pathconf(tmp_path, "PC_PATH_MAX")
    name = "folder-" + "x" * 200
    with nested_folders(tmp_path, longest // len(name) + 2, name, "deep.md") as deep:
        listing = list_vault(tmp_path)
        assert listing.paths == ["top.md"]
        (skip,) = listing.skipped
        assert skip.reason == f"unreadable folder ({os.strerror(errno.ENAMETOOLONG)})"
        # the first folder of the chain the system cannot name, the one above it still walked
        assert deep.startswith(skip.path + "/")
        assert len(str(tmp_path / skip.path)) >= longest > len(str(tmp_path / skip.path)) - len(name) - 1
