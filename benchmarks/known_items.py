"""Known-item query sets built from the tldr and obsidian-help corpora, and their MRR@10 (run by hand).

    .venv/bin/python benchmarks/known_items.py [--corpora tldr,obsidian-help] [--systems nlmsync,bm25s,...]
    .venv/bin/python benchmarks/known_items.py --show tldr-examples     # print a set's queries

A known-item query stands for a person who remembers something of one page and wants that page back:
the query is a line of the page, the target is the page, and the whole multilingual corpus is searched.
Nothing here was chosen by looking at how any system ranks; every set is drawn with a fixed seed.

- `tldr-examples`, `tldr-summaries`: an English page's example description (`- Create an archive:`)
  or first summary line (`> Archiving utility.`), with the page's command name removed and tldr's
  markup (`[c]reate`, backticks, the closing colon) taken off.
- `tldr-cjk-examples`, `tldr-cjk-summaries`: the same from `pages.ko`, `pages.ja` and `pages.zh`,
  an equal number per language, also reported per language.
- `obsidian-headings`: an English obsidian-help section heading (`## Set your template folder`),
  verbatim; `obsidian-headings-edited`: the same headings with a third of their words dropped
  (at least one, for three words or more) and the rest shuffled.

A line is only used if it is unique in its corpus (after the cleaning above): a line that two pages
share has no single right answer. Each set is shuffled and split in two halves: `tune`, the one the
query weighting may be tuned on, and `report`, the one reported.

Peers come from `search_peers.py` (the same adapters, each with its default tokenizer); each system
runs in its own process.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_peers import CACHE, CORPORA, make_system, materialize

SEED = 16
EXAMPLES_PER_SET = 400  # English sets, and obsidian headings
PER_CJK_LANGUAGE = 150
CJK = {"pages.ko": "ko", "pages.ja": "ja", "pages.zh": "zh"}
HALVES = ("tune", "report")
SYSTEMS = ["nlmsync", "bm25s", "tantivy", "fts5"]


@dataclass(frozen=True)
class Item:
    set: str
    lang: str
    half: str
    query: str
    target: str


# --- the sets ----------------------------------------------------------------------------------

def _records(corpus: str) -> Iterator[tuple[str, str]]:
    with gzip.open(CORPORA / f"{corpus}.jsonl.gz", "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            yield record["path"], record["text"]


_MARKUP = re.compile(r"[`\[\]]|\{\{|\}\}")
_SPACES = re.compile(r"\s+")


def _clean_tldr(line: str, command: str) -> str:
    """A tldr line as a person might type it: markup off, the command name removed, no closing colon."""
    text = _MARKUP.sub("", line)
    for name in {command, command.replace("-", " ")}:
        text = re.sub(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", " ", text, flags=re.IGNORECASE)
    text = _SPACES.sub(" ", text).strip()
    return text.rstrip(":：.。 ").strip()


def _tldr_lines(text: str) -> tuple[list[str], list[str]]:
    """A page's example descriptions and its summary lines (the first, and the others but links)."""
    examples = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    summaries = [line[2:] for line in text.splitlines() if line.startswith("> ") and "<http" not in line]
    return examples, summaries[:1]


def _usable(query: str, cjk: bool) -> bool:
    if cjk:
        return len(query) >= 4
    return len(query.split()) >= 2


def tldr_sets() -> list[Item]:
    pages: list[tuple[str, str, list[str], list[str]]] = []  # (path, lang, examples, summaries), cleaned
    counts: Counter[str] = Counter()
    for path, text in _records("tldr"):
        folder = path.split("/", 1)[0]
        command = Path(path).stem
        examples, summaries = _tldr_lines(text)
        examples = [_clean_tldr(line, command) for line in examples]
        summaries = [_clean_tldr(line, command) for line in summaries]
        counts.update({line.lower() for line in examples + summaries})
        if folder == "pages" or folder in CJK:
            pages.append((path, "en" if folder == "pages" else CJK[folder], examples, summaries))
    rng = random.Random(SEED)
    items: list[Item] = []
    for kind, position in (("examples", 2), ("summaries", 3)):
        for lang in ("en", *CJK.values()):
            pool = []
            for page in pages:
                if page[1] != lang:
                    continue
                lines = [q for q in page[position] if counts[q.lower()] == 1 and _usable(q, lang != "en")]  # type: ignore[union-attr]
                if lines:
                    pool.append((rng.choice(lines), page[0]))
            size = EXAMPLES_PER_SET if lang == "en" else PER_CJK_LANGUAGE
            name = f"tldr-{kind}" if lang == "en" else f"tldr-cjk-{kind}"
            items.extend(_halves(name, lang, rng.sample(pool, min(size, len(pool)))))
    return items


def _headings(text: str) -> Iterator[str]:
    fence = None
    for line in text.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            continue
        match = re.match(r"#{1,6}\s+(.+?)\s*#*\s*$", line)
        if match:
            yield _SPACES.sub(" ", match.group(1).replace("`", "")).strip()


def obsidian_sets() -> list[Item]:
    counts: Counter[str] = Counter()
    english: list[tuple[str, list[str]]] = []
    for path, text in _records("obsidian-help"):
        headings = list(_headings(text))
        counts.update({h.lower() for h in headings})
        if path.startswith("en/"):
            english.append((path, headings))
    rng = random.Random(SEED)
    pool = []
    for path, headings in english:
        for heading in headings:
            if counts[heading.lower()] == 1 and len(heading.split()) >= 2:
                pool.append((heading, path))
    chosen = rng.sample(pool, min(EXAMPLES_PER_SET, len(pool)))
    edited = []
    for heading, path in chosen:
        words = heading.split()
        drop = len(words) // 3
        for _ in range(drop):
            words.pop(rng.randrange(len(words)))
        rng.shuffle(words)
        edited.append((" ".join(words), path))
    return [*_halves("obsidian-headings", "en", chosen), *_halves("obsidian-headings-edited", "en", edited)]


def _halves(name: str, lang: str, drawn: list[tuple[str, str]]) -> list[Item]:
    """The drawn (query, target) pairs, alternately in the tuning and the reported half."""
    return [Item(name, lang, HALVES[i % 2], query, target) for i, (query, target) in enumerate(drawn)]


def known_item_sets(corpus: str) -> list[Item]:
    return tldr_sets() if corpus == "tldr" else obsidian_sets() if corpus == "obsidian-help" else []


# --- the measure -------------------------------------------------------------------------------

def reciprocal_rank(ranked: list[str], target: str) -> float:
    return 1.0 / (ranked.index(target) + 1) if target in ranked else 0.0


def group_keys(item: Item) -> list[str]:
    """The result groups an item counts in: its set and half, and per CJK language too."""
    keys = [f"{item.set} {item.half}"]
    if item.lang != "en":
        keys.append(f"{item.set} {item.lang} {item.half}")
    return keys


def mrr(ranks: dict[Item, list[str]]) -> dict[str, float]:
    """MRR@10 per group (`group_keys`), from each item's first ten results."""
    groups: dict[str, list[float]] = {}
    for item, ranked in ranks.items():
        for key in group_keys(item):
            groups.setdefault(key, []).append(reciprocal_rank(ranked[:10], item.target))
    return {key: sum(values) / len(values) for key, values in sorted(groups.items())}


def evaluate(system: Any, corpus: str) -> dict[str, float]:
    """MRR@10 of a built `search_peers` system on the corpus's known-item sets."""
    return mrr({item: system.query(item.query, 10) for item in known_item_sets(corpus)})


def worker(name: str, corpus: str, workdir: Path) -> dict[str, float]:
    system = make_system(name, workdir, corpus)
    system.build()
    return evaluate(system, corpus)


def run(corpora: list[str], systems: list[str]) -> dict[str, dict[str, dict[str, float]]]:
    import shutil
    results: dict[str, dict[str, dict[str, float]]] = {}
    for corpus in corpora:
        materialize(corpus)
        results[corpus] = {}
        for name in systems:
            workdir = CACHE / corpus / "known-items" / name
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            print(f"… {corpus}: {name}", file=sys.stderr, flush=True)
            done = subprocess.run([sys.executable, __file__, "--worker", name, corpus, str(workdir)],
                                  capture_output=True, text=True, timeout=3600, check=False)
            if done.returncode != 0:
                print(f"{name} on {corpus} failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            results[corpus][name] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def report(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """One markdown table: a row per set and half (and CJK language), a column per system."""
    systems = [name for name in SYSTEMS if any(name in r for r in results.values())]
    lines = ["| set | " + " | ".join(systems) + " |", "|---|" + "---|" * len(systems)]
    for per_system in results.values():
        keys = sorted({key for r in per_system.values() for key in r})
        for key in keys:
            values = [per_system.get(name, {}).get(key) for name in systems]
            best_peer = max((v for n, v in zip(systems, values) if n != "nlmsync" and v is not None), default=None)
            cells = []
            for name, value in zip(systems, values):
                cell = "—" if value is None else f"{value:.3f}"
                if name == "nlmsync" and value is not None and best_peer is not None and value < best_peer:
                    cell += " ✗"
                cells.append(cell)
            lines.append(f"| {key} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="tldr,obsidian-help")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--show", metavar="SET", help="print the queries of one set (both halves) and stop")
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "CORPUS", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        name, corpus, workdir = args.worker
        print(json.dumps(worker(name, corpus, Path(workdir))))
        return
    if not CORPORA.exists():
        sys.exit(f"corpora not found at {CORPORA}")
    if args.show:
        corpus = "obsidian-help" if args.show.startswith("obsidian") else "tldr"
        for item in known_item_sets(corpus):
            if item.set == args.show:
                print(f"{item.half}\t{item.lang}\t{item.target}\t{item.query}")
        return
    results = run(args.corpora.split(","), args.systems.split(","))
    (CACHE / "known_items_results.json").write_text(json.dumps(results, indent=1))
    print(report(results))


if __name__ == "__main__":
    main()
