"""A generated vault of many notes, 1–10 KB each, drawn from the three corpora (for the benchmarks at scale).

    .venv/bin/python benchmarks/scale_vault.py 100000 [--cache DIR]    # prints the vault's folder

The corpora (built by `benchmarks/corpora.py`, or the folder `BENCHMARK_CORPORA` names) are written out as notes into
the cache folder (default `~/.cache/nlmsync-benchmarks`, outside the repository; `BENCHMARK_CACHE`
overrides it), then each note is drawn with a fixed seed: a corpus (tldr, obsidian-help or Cranfield, in
proportion 9 : 9 : 2), a random run of consecutive files of it (so of one language and one folder), joined
until the note's size, drawn as `1 KB × (1 + 9 u^1.5)` for u uniform in [0, 1) (median 4.2 KB, mean 4.6 KB),
cut at the end of a line. A note is named after the first file of its run and its number
(`obsidian-help/fr/Plugins/Canvas 00042.md`); the first file's front matter, if any, stays at the top.

The notes are drawn in one sequence: the vault of N notes is the first N notes of any larger one. Each count's
vault is its own folder (`scale-<N>/vault`), written once; `scale_vault(count)` is the function the
benchmarks import.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

from corpora import (  # benchmarks/corpora.py: where the corpora are, and how to write them out
    CORPORA,
    SOURCES,
)
from corpora import materialize as write_out
from search_peers import documents  # benchmarks/search_peers.py: a vault's notes, (path, text), sorted

DEFAULT_CACHE = Path(os.environ.get("BENCHMARK_CACHE", Path.home() / ".cache" / "nlmsync-benchmarks"))
WEIGHTS = {"tldr": 9, "obsidian-help": 9, "cranfield": 2}
SEED = 26
MIN_BYTES, MAX_BYTES = 1024, 10 * 1024


def materialized(corpus: str, cache: Path = DEFAULT_CACHE, corpora: Path = CORPORA) -> Path:
    """The corpus as a folder of notes in the cache, written once from the folder `corpora`."""
    target = cache / "corpora" / corpus
    marker = cache / "corpora" / f"{corpus}.materialized"
    if not marker.exists():
        if target.exists():
            shutil.rmtree(target)
        write_out(corpora / SOURCES[corpus], target)
        marker.write_text("ok")
    return target


def _without_front_matter(text: str) -> str:
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5:]
    return text


def generate(cache: Path = DEFAULT_CACHE, corpora_folder: Path = CORPORA) -> Iterator[tuple[str, str]]:
    """The notes, (vault path, text), in the one sequence every count takes a prefix of."""
    corpora = {name: documents(materialized(name, cache, corpora_folder)) for name in SOURCES}
    names = list(WEIGHTS)
    weights = [WEIGHTS[name] for name in names]
    rng = random.Random(SEED)
    number = 0
    while True:
        number += 1
        corpus = rng.choices(names, weights)[0]
        files = corpora[corpus]
        size = int(MIN_BYTES * (1 + 9 * rng.random() ** 1.5))
        start = rng.randrange(len(files))
        first_path, first_text = files[start]
        parts = [first_text.rstrip("\n")]
        length = len(parts[0].encode("utf-8"))
        i = start
        while length < size:
            i = (i + 1) % len(files)
            part = _without_front_matter(files[i][1]).strip("\n")
            parts.append(part)
            length += len(part.encode("utf-8")) + 2
        text = "\n\n".join(parts)
        data = text.encode("utf-8")
        if len(data) > size:  # cut at the end of the last line that fits
            cut = data.rfind(b"\n", 0, size)
            data = data[:cut if cut >= MIN_BYTES else size]
            text = data.decode("utf-8", errors="ignore")
        stem = first_path.removesuffix(".md")
        yield f"{corpus}/{stem} {number:05d}.md", text.rstrip("\n") + "\n"


def scale_vault(count: int, cache: Path = DEFAULT_CACHE, corpora: Path = CORPORA) -> Path:
    """The folder of a vault of `count` generated notes (written on first use, from the folder `corpora`)."""
    target = cache / f"scale-{count}" / "vault"
    marker = cache / f"scale-{count}" / ".generated"
    if marker.exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    made: set[Path] = set()
    for n, (path, text) in enumerate(generate(cache, corpora), start=1):
        out = target / path
        if out.parent not in made:
            out.parent.mkdir(parents=True, exist_ok=True)
            made.add(out.parent)
        out.write_bytes(text.encode("utf-8"))
        if n == count:
            break
    marker.write_text("ok")
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("count", type=int)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    print(scale_vault(args.count, args.cache))


if __name__ == "__main__":
    main()
