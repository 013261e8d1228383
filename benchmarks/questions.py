"""What nlmsync sends for natural questions, against its peers' rankings (run by hand).

    .venv/bin/python benchmarks/questions.py [--corpora obsidian-help,tldr] [--systems nlmsync,bm25s,tantivy,fts5]
    .venv/bin/python benchmarks/questions.py --against main=/tmp/main/src    # nlmsync of another source too
    .venv/bin/python benchmarks/questions.py --show tldr --split dev        # each question's selection

The questions are `benchmarks/questions/*.jsonl` (how they were written: `benchmarks/questions/README.md`): each
has one answering page (`target`), a language and a `dev`/`test` split. Every system answers in its own process,
over the vault `search_peers.py` materializes from the corpora `benchmarks/corpora.py` builds. Per split:

- *hit@1*, *hit@5*: the answering page is the first result, or among the first five. For nlmsync, the results
  in the order its selection takes them (translations of one page one result, in the question's language);
  for a peer, its ranking.
- *in selection*: the answering page is among the notes sent (nlmsync's selection; a peer's first `TOP_N`, what
  a selection that never trims sends).
- *sent*: the mean number of notes sent; *weak*: the questions nlmsync said nothing matches well (nothing sent).
- *other language*: the share of the notes sent that are in another language than the question while the vault
  holds that page in the question's language. A note's language is its language folder (`pages.ko/`, `de/`;
  tldr's `pages/` and the help vault's `Release notes/` and `Sandbox/` are English); the same page in two languages
  is the same platform and command file (tldr) or the same front-matter `permalink` (the help vault).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from search_peers import CACHE, CORPORA, documents, make_system, materialize

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions"
SYSTEMS = ["nlmsync", "bm25s", "tantivy", "fts5"]
TOP_N = 15
SPLITS = ("dev", "test")
_PERMALINK = re.compile(r"^permalink:\s*(\S+)", re.MULTILINE)


def questions(corpus: str) -> list[dict[str, Any]]:
    with (QUESTIONS / f"{corpus}.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def language_of(corpus: str, path: str) -> str:
    """A page's language by its folder, in the questions' codes (`pt-br`, `zh`)."""
    folder = path.split("/", 1)[0]
    if corpus == "tldr":
        code = folder.partition(".")[2] or "en"
    else:
        code = folder if "/" in path and folder not in ("Release notes", "Sandbox") else "en"
    return code.lower().replace("_", "-")


def page_of(corpus: str, path: str, text: str) -> str:
    """What a page's copies in every language share: tldr's platform and command, the help vault's permalink."""
    if corpus == "tldr":
        return path.split("/", 1)[1]
    found = _PERMALINK.search(text[:2000])
    return found.group(1) if found else path


def nlmsync_answers(system: Any, question: str) -> tuple[list[str], list[str], bool]:
    """nlmsync's results in selection order, the notes it sends, and whether it said nothing matches well."""
    index = system.index
    if hasattr(index, "selection"):
        selection = index.selection(question)
        return [hit.path for hit in selection.candidates], [hit.path for hit in selection.chosen], selection.weak
    return [hit.path for hit in index.search(question, limit=TOP_N)], [hit.path for hit in index.selected(question)], False


def worker(name: str, corpus: str, workdir: Path) -> dict[str, Any]:
    system = make_system("nlmsync" if name.startswith("nlmsync") else name, workdir, corpus)
    system.build()
    answers = {}
    for item in questions(corpus):
        if name.startswith("nlmsync"):
            ranked, sent, weak = nlmsync_answers(system, item["question"])
        else:
            ranked = system.query(item["question"], TOP_N)
            sent, weak = ranked, False
        answers[item["id"]] = {"ranked": ranked, "sent": sent, "weak": weak}
    return answers


def run(corpora: list[str], systems: list[str], against: list[str]) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    runs = [(name, None) for name in systems] + [(f"nlmsync {spec.partition('=')[0]}", spec.partition("=")[2])
                                                 for spec in against]
    for corpus in corpora:
        materialize(corpus)
        results[corpus] = {}
        for name, src in runs:
            workdir = CACHE / corpus / "questions" / name
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            env = dict(os.environ)
            if src:
                env["PYTHONPATH"] = str(Path(src).resolve()) + os.pathsep + env.get("PYTHONPATH", "")
            print(f"… {corpus}: {name}", file=sys.stderr, flush=True)
            done = subprocess.run([sys.executable, __file__, "--worker", name, corpus, str(workdir)], env=env,
                                  capture_output=True, text=True, timeout=3600, check=False)
            if done.returncode != 0:
                print(f"{name} on {corpus} failed: {done.stderr.strip()[-600:]}", file=sys.stderr)
                continue
            results[corpus][name] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def figures(corpus: str, answers: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per split: hit@1, hit@5, in selection, mean sent, weak, other-language share."""
    texts = dict(documents(corpus))
    page = {path: page_of(corpus, path, text) for path, text in texts.items()}
    held = {(page[path], language_of(corpus, path)) for path in texts}
    out: dict[str, dict[str, float]] = {}
    for split in SPLITS:
        items = [item for item in questions(corpus) if item["split"] == split and item["id"] in answers]
        if not items:
            continue
        hit1 = hit5 = chosen = sent = weak = other = 0
        for item in items:
            answer = answers[item["id"]]
            ranked, notes = answer["ranked"], answer["sent"]
            hit1 += item["target"] in ranked[:1]
            hit5 += item["target"] in ranked[:5]
            chosen += item["target"] in notes
            sent += len(notes)
            weak += bool(answer["weak"])
            other += sum(1 for path in notes if language_of(corpus, path) != item["lang"]
                         and (page.get(path), item["lang"]) in held)
        n = len(items)
        out[split] = {"questions": n, "hit@1": hit1 / n, "hit@5": hit5 / n, "in selection": chosen / n,
                      "sent": sent / n, "weak": weak, "other language": other / sent if sent else 0.0}
    return out


def report(results: dict[str, dict[str, Any]]) -> str:
    lines = []
    for corpus, per_system in results.items():
        lines += [f"\n{corpus}", "| system | split | hit@1 | hit@5 | in selection | sent | other language | weak |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, answers in per_system.items():
            for split, row in figures(corpus, answers).items():
                lines.append(f"| {name} | {split} ({row['questions']:.0f}) | {row['hit@1']:.3f} | {row['hit@5']:.3f} | "
                             f"{row['in selection']:.3f} | {row['sent']:.1f} | {row['other language']:.1%} | "
                             f"{row['weak']:.0f} |")
    return "\n".join(lines)


def show(corpus: str, split: str, name: str) -> None:
    """Each question of a split with where its answer ranked and what was sent (from the last run)."""
    results = json.loads((CACHE / "questions_results.json").read_text())
    answers = results[corpus][name]
    for item in questions(corpus):
        if item["split"] != split:
            continue
        answer = answers[item["id"]]
        rank = answer["ranked"].index(item["target"]) + 1 if item["target"] in answer["ranked"] else None
        mark = "✓" if item["target"] in answer["sent"] else "✗"
        print(f"{mark} rank {rank} sent {len(answer['sent'])}{' weak' if answer['weak'] else ''} "
              f"[{item['lang']}] {item['question']} -> {item['target']}")
        for path in answer["sent"][:6]:
            print(f"      {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="obsidian-help,tldr")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--against", action="append", default=[], metavar="NAME=SRC",
                        help="also nlmsync from another source folder (one holding the nlmsync package)")
    parser.add_argument("--show", metavar="CORPUS", help="print the last run's answers of one corpus and stop")
    parser.add_argument("--split", default="dev", choices=SPLITS)
    parser.add_argument("--system", default="nlmsync", help="the system --show prints")
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "CORPUS", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        name, corpus, workdir = args.worker
        print(json.dumps(worker(name, corpus, Path(workdir))))
        return
    if args.show:
        show(args.show, args.split, args.system)
        return
    if not CORPORA.exists():
        sys.exit(f"corpora not found at {CORPORA}")
    results = run(args.corpora.split(","), [s for s in args.systems.split(",") if s], args.against)
    previous = CACHE / "questions_results.json"
    kept = json.loads(previous.read_text()) if previous.exists() else {}
    for corpus, per_system in results.items():
        kept.setdefault(corpus, {}).update(per_system)
    previous.write_text(json.dumps(kept))
    print(report(results))


if __name__ == "__main__":
    main()
