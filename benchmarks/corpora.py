"""The public corpora the benchmarks read, fetched from where they are published and built into one folder.

    .venv/bin/python benchmarks/corpora.py                 # download (network needed) and build, ~13 MB
    .venv/bin/python benchmarks/corpora.py --to DIR        # into DIR instead of the default folder
    .venv/bin/python benchmarks/corpora.py --archives DIR  # build from archives fetched by other means

Run by hand, never by the tests or CI. The folder (default `~/.cache/nlmsync-benchmarks/corpora`, or the one
`BENCHMARK_CORPORA` names; every benchmark reads `CORPORA` from here) then holds:

- `tldr.jsonl.gz`: every page of the tldr pages (https://github.com/tldr-pages/tldr, CC BY 4.0) at commit
  `TLDR_COMMIT`, English and 38 translations: `pages/` and `pages.<lang>/` (`pages.en`, a link to `pages`, left
  out), 38,404 pages;
- `obsidian-help.jsonl.gz`: Obsidian's help vault (https://github.com/obsidianmd/obsidian-help) at commit
  `OBSIDIAN_COMMIT`, 6,277 notes in 34 languages plus its release notes, every `.md` file but the repository's
  own (`README.md`, `AGENTS.md`, `.github/`, `.claude/`, `scripts/`). The repository declares no license: fetch
  it for your own measurements, and do not redistribute it;
- `cranfield/`: the Cranfield collection (1,400 aeronautics abstracts, 225 questions, their relevance
  judgements), from the copy in https://github.com/noramtboraas/information-retrieval at commit
  `CRANFIELD_COMMIT`: `raw/` (the four files as published), `corpus.jsonl` (`id`, `title`, `author`, `bib`,
  `text`), `queries.jsonl` (`id`, the question's position, which the judgements use; `orig_id`, its `.I`
  number; `text`) and `qrels.tsv` (`query_id`, `doc_id`, `relevance`: 1 the most relevant … 4, -1 not).

A `*.jsonl.gz` holds one JSON object `{"path": …, "text": …}` per file, sorted by path, the text exactly as in
the repository. `materialize(source, folder)` writes a corpus out as a folder of notes, as the benchmarks read
it.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import tarfile
import urllib.request
from collections.abc import Iterator
from pathlib import Path

TLDR_COMMIT = "08e345f42639f67d99282813247ac670dc6e87cb"
OBSIDIAN_COMMIT = "fa179e91e86eaff5859226cc045c81000d64e3cd"
CRANFIELD_COMMIT = "4ea1b8e02da1db64b68b0364d50620b3c95528dc"
ARCHIVES = {
    "tldr": f"https://codeload.github.com/tldr-pages/tldr/tar.gz/{TLDR_COMMIT}",
    "obsidian-help": f"https://codeload.github.com/obsidianmd/obsidian-help/tar.gz/{OBSIDIAN_COMMIT}",
}
CRANFIELD_FILES = ("cran.all.1400", "cran.qry", "cranqrel", "cranqrel.readme")
CRANFIELD_URL = f"https://raw.githubusercontent.com/noramtboraas/information-retrieval/{CRANFIELD_COMMIT}/{{name}}"
OBSIDIAN_LEFT_OUT = re.compile(r"(README|AGENTS)\.md|\.github/.*|\.claude/.*|scripts/.*")
TLDR_PAGES = re.compile(r"pages(\.[^/]+)?/.+\.md")

DEFAULT_FOLDER = Path.home() / ".cache" / "nlmsync-benchmarks" / "corpora"
CORPORA = Path(os.environ.get("BENCHMARK_CORPORA", DEFAULT_FOLDER))
"""Where the benchmarks read the corpora: `BENCHMARK_CORPORA`, else the folder this script builds by default (not
an `NLMSYNC_*` name: nlmsync reads every one of those as a setting, and the benchmarks' nlmsync processes inherit
the environment)."""
SOURCES = {"tldr": "tldr.jsonl.gz", "obsidian-help": "obsidian-help.jsonl.gz", "cranfield": "cranfield/corpus.jsonl"}
ONE_LANGUAGE = {"tldr-en": ("tldr", "pages")}
"""Corpora of one language made from another's notes under one top folder: `tldr-en` is tldr's English pages (7,425),
a vault in one language as large as a personal one."""


def _download(url: str) -> bytes:
    """The bytes at `url`; one line and exit 1 when they cannot be fetched (no network, a proxy refusing)."""
    try:
        with urllib.request.urlopen(url, timeout=300) as answer:
            return bytes(answer.read())
    except OSError as exc:  # urllib's URLError and HTTPError are OSErrors, as a timeout or a reset is
        reason = getattr(exc, "reason", None) or exc.strerror or exc
        raise SystemExit(f"corpora.py: cannot download {url} ({reason}); check the network, or fetch the "
                         "archives by other means and pass --archives DIR") from None


def _read(folder: Path, name: str) -> bytes:
    """A file fetched by other means (`--archives`); one line and exit 1 when it cannot be read."""
    try:
        return (folder / name).read_bytes()
    except OSError as exc:
        raise SystemExit(f"corpora.py: cannot read {folder / name} ({exc.strerror}); --archives DIR holds "
                         "tldr.tar.gz, obsidian-help.tar.gz and the Cranfield files") from None


def _archive_files(archive: bytes) -> Iterator[tuple[str, bytes]]:
    """(path inside the repository, bytes) of each regular file of a GitHub source archive; links are not files."""
    with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
        for member in tar:
            if member.isfile():
                path = member.name.split("/", 1)[1]
                extracted = tar.extractfile(member)
                assert extracted is not None
                yield path, extracted.read()


def _kept(corpus: str, path: str) -> bool:
    if not path.endswith(".md"):
        return False
    if corpus == "tldr":
        return TLDR_PAGES.fullmatch(path) is not None
    return OBSIDIAN_LEFT_OUT.fullmatch(path) is None


def build_jsonl(corpus: str, archive: bytes, target: Path) -> int:
    """`target` (`*.jsonl.gz`) from a GitHub archive of the corpus' repository; the number of files kept."""
    records = sorted((path, data.decode("utf-8")) for path, data in _archive_files(archive) if _kept(corpus, path))
    with gzip.open(target, "wt", encoding="utf-8", newline="") as out:
        for path, text in records:
            out.write(json.dumps({"path": path, "text": text}, ensure_ascii=False) + "\n")
    return len(records)


def _fields(text: str) -> Iterator[tuple[str, list[str]]]:
    """The records of a Cranfield file: (`.I` number, its lines), CR dropped."""
    number, lines = "", []
    for line in text.replace("\r\n", "\n").split("\n"):
        if line.startswith(".I "):
            if number:
                yield number, lines
            number, lines = line[3:].strip(), []
        elif number:
            lines.append(line)
    if number:
        yield number, lines


def cranfield_documents(text: str) -> Iterator[dict[str, str]]:
    """`cran.all.1400`'s abstracts: title, author and bib with white space collapsed; the text as written
    (trailing spaces and the block's ends trimmed). A marker inside the text (`.A`, `.B`, a second `.W`, as a
    few records have) is dropped and what follows kept as text."""
    for number, lines in _fields(text):
        fields: dict[str, list[str]] = {"T": [], "A": [], "B": [], "W": []}
        field = ""
        for line in lines:
            marker = line.strip()
            if re.fullmatch(r"\.[TABW]", marker):
                field = field if field == "W" else marker[1]
                continue
            if field:
                fields[field].append(line.rstrip())
        yield {"id": number, "title": _collapsed(fields["T"]), "author": _collapsed(fields["A"]),
               "bib": _collapsed(fields["B"]), "text": "\n".join(fields["W"]).strip()}


def _collapsed(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def cranfield_queries(text: str) -> Iterator[dict[str, str]]:
    """`cran.qry`'s questions numbered by position (the judgements' numbering), their `.I` kept as `orig_id`."""
    for position, (number, lines) in enumerate(_fields(text), 1):
        words = [line for line in lines if line.strip() != ".W"]
        yield {"id": str(position), "orig_id": number, "text": _collapsed(words)}


def build_cranfield(raw: dict[str, bytes], folder: Path) -> int:
    """`folder` (`cranfield/`) from the four published files; the number of abstracts."""
    (folder / "raw").mkdir(parents=True, exist_ok=True)
    for name, data in raw.items():
        (folder / "raw" / name).write_bytes(data)
    documents = list(cranfield_documents(raw["cran.all.1400"].decode("utf-8")))
    with (folder / "corpus.jsonl").open("w", encoding="utf-8", newline="") as out:
        out.writelines(json.dumps(d, ensure_ascii=False) + "\n" for d in documents)
    with (folder / "queries.jsonl").open("w", encoding="utf-8", newline="") as out:
        out.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in cranfield_queries(raw["cran.qry"].decode()))
    judgements = [line.split() for line in raw["cranqrel"].decode().splitlines() if line.strip()]
    (folder / "qrels.tsv").write_text("query_id\tdoc_id\trelevance\n" + "".join(
        f"{q}\t{d}\t{r}\n" for q, d, r in judgements), encoding="utf-8")
    return len(documents)


def records(source: Path) -> Iterator[tuple[str, str]]:
    """(path, text) of each note of a corpus file: a `*.jsonl.gz` of files, or Cranfield's `corpus.jsonl`, whose
    abstracts become `<id>.md`, the title as a heading above the text."""
    with (gzip.open(source, "rt", encoding="utf-8") if source.suffix == ".gz" else
          source.open(encoding="utf-8")) as lines:
        for line in lines:
            record = json.loads(line)
            if "path" in record:
                yield record["path"], record["text"]
                continue
            title = record.get("title") or ""
            text = (f"# {title}\n\n" if title else "") + (record.get("text") or "")
            yield f"{record['id']}.md", text if not text or text.endswith("\n") else text + "\n"


def materialize(source: Path, folder: Path, language: str | None = None) -> int:
    """The corpus file `source` written out as a folder of notes under `folder` (with `language`, only the notes
    under that top folder: `pages` is tldr's English); the number of notes."""
    folder.mkdir(parents=True, exist_ok=True)
    root = folder.resolve()
    count = 0
    for path, text in records(source):
        if language is not None and path.split("/", 1)[0] != language:
            continue
        target = (root / path).resolve()
        if root not in target.parents:
            raise ValueError(f"{source}: {path!r} leaves the folder")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8"))
        count += 1
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--to", type=Path, default=CORPORA, help="the folder to build (default: %(default)s)")
    parser.add_argument("--archives", type=Path, help="a folder holding tldr.tar.gz, obsidian-help.tar.gz and the "
                        "Cranfield files, fetched by other means: built from those, nothing downloaded")
    args = parser.parse_args()
    args.to.mkdir(parents=True, exist_ok=True)
    for corpus, url in ARCHIVES.items():
        archive = _read(args.archives, f"{corpus}.tar.gz") if args.archives else _download(url)
        print(f"{corpus}: {build_jsonl(corpus, archive, args.to / SOURCES[corpus])} files")
    raw = {name: _read(args.archives, name) if args.archives else _download(CRANFIELD_URL.format(name=name))
           for name in CRANFIELD_FILES}
    print(f"cranfield: {build_cranfield(raw, args.to / 'cranfield')} abstracts")
    print(f"built in {args.to}")


if __name__ == "__main__":
    main()
