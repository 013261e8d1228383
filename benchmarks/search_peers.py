"""nlmsync's note search against its peers on real corpora (run by hand, never in CI).

    .venv/bin/pip install -e '.[bench]'
    .venv/bin/python benchmarks/search_peers.py [--corpora tldr,obsidian-help,cranfield] [--queries 1000]

Peers: bm25s, rank_bm25, tantivy and SQLite FTS5, each with its own default tokenizer, and (suffix
`+nlm`) fed nlmsync's tokens where it accepts tokens. Every system gets the same documents (the
files of a vault written out from the corpora `benchmarks/corpora.py` builds into `benchmarks/.cache/`, git-ignored) and
runs in its own process, so peak memory is that process's peak RSS.

Measured per corpus (in-process figures are CPU seconds of the worker process, so that other work on
a shared machine does not distort them): full build time (reading the files included), queries per
second answered one at a time (the query's tokenization included; rank_bm25 gets a fifth of the queries: it scans every
document per query term), the same counting only each distinct query's first time (Cranfield's 225 questions are
repeated to make 1,000, and nlmsync answers a repeated one from its per-term cache), peak RSS, the cost of one edited note until the next query is answered
(a full rebuild for peers that cannot update), and the wall and CPU time of a fresh process that
answers one query from the persisted index (interpreter start included, best of 5 after an untimed
run; for nlmsync this includes the mtime/size rescan of the vault). For nlmsync the fresh process is
timed twice: the library's search path, and the command line `nlmsync search --json QUERY` (typer,
the config model and the snippets included), whose CPU time is printed against each peer's. Relevance: Cranfield nDCG@10 and recall@100 (gain 5 - grade for
grades 1..4, the -1 base documents count as not relevant), and known-item MRR@10 on the Chinese,
Japanese and Korean tldr pages (query: the page's description line; target: that page; searched
in the whole tldr corpus), and the same with only the middle half of the line as the query (what a
person remembers of it rather than the verbatim sentence).

Printed: one markdown table per corpus with nlmsync/peer ratios, then the relevance table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from corpora import (  # benchmarks/corpora.py: where the corpora are, and how to write them out
    CORPORA,
    ONE_LANGUAGE,
    SOURCES,
)
from corpora import materialize as write_out

REPO = Path(__file__).resolve().parent.parent
CACHE = REPO / "benchmarks" / ".cache"
SYSTEMS = ["nlmsync", "bm25s", "bm25s+nlm", "rank_bm25", "rank_bm25+nlm", "tantivy", "tantivy+nlm", "fts5",
           "fts5+nlm"]
CJK_LANGS = ["pages.zh", "pages.ja", "pages.ko"]
EDIT_WORD = "zqxjvbenchedit"


# --- corpora -----------------------------------------------------------------------------------

def vault_dir(corpus: str | Path) -> Path:
    """A corpus's vault in the cache; a `Path` is a vault already (`scale.py`'s generated vaults)."""
    return corpus if isinstance(corpus, Path) else CACHE / corpus / "vault"


def materialize(corpus: str) -> Path:
    target = vault_dir(corpus)
    marker = CACHE / corpus / ".materialized"
    if marker.exists():
        return target
    if target.exists():
        shutil.rmtree(target)
    source, language = ONE_LANGUAGE.get(corpus, (corpus, None))
    write_out(CORPORA / SOURCES[source], target, language)
    marker.write_text("ok")
    return target


def documents(corpus: str | Path) -> list[tuple[str, str]]:
    root = vault_dir(corpus)
    docs = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".md"):
                full = Path(dirpath) / name
                docs.append((full.relative_to(root).as_posix(), full.read_text(encoding="utf-8")))
    docs.sort()
    return docs


def description(text: str) -> str | None:
    for line in text.splitlines():
        if line.startswith("> "):
            return line[2:].strip()
    return None


def throughput_queries(corpus: str, docs: list[tuple[str, str]], n: int) -> list[str]:
    rng = random.Random(7)
    if corpus == "cranfield":
        queries = [json.loads(line)["text"] for line in (CORPORA / "cranfield" / "queries.jsonl").open()]
        return [queries[i % len(queries)] for i in range(n)]
    out: list[str] = []
    while len(out) < n:
        path, text = docs[rng.randrange(len(docs))]
        line = description(text) if corpus == "tldr" else None
        if line is None:
            heading = next((ln.lstrip("# ").strip() for ln in text.splitlines() if ln.startswith("#")), "")
            line = f"{Path(path).stem} {heading}".strip()
        out.append(line)
    return out


def cranfield_judgements() -> tuple[list[tuple[str, str]], dict[str, dict[str, int]]]:
    queries = [(q["id"], q["text"]) for q in map(json.loads, (CORPORA / "cranfield" / "queries.jsonl").open())]
    qrels: dict[str, dict[str, int]] = {}
    lines = (CORPORA / "cranfield" / "qrels.tsv").read_text().splitlines()[1:]
    for line in lines:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[f"{doc}.md"] = int(grade)
    return queries, qrels


def known_items(docs: list[tuple[str, str]], per_lang: int) -> list[tuple[str, str, str]]:
    """(target path, its description line, the middle half of that line) for sampled CJK pages."""
    rng = random.Random(11)
    items: list[tuple[str, str, str]] = []
    for lang in CJK_LANGS:
        pool = [(description(text), path) for path, text in docs if path.startswith(lang + "/")]
        pool = [(q, p) for q, p in pool if q]
        for query, path in rng.sample(pool, min(per_lang, len(pool))):
            cut = len(query) // 4
            items.append((path, query, query[cut:len(query) - cut]))
    return items


# --- systems -----------------------------------------------------------------------------------

def nlm_tokens(path: str, text: str) -> list[str]:
    from nlmsync.search.tokenize import tokenize, tokenize_path
    return tokenize(text) + tokenize_path(path)


class System:
    """One search engine behind a common face: build, query, edit one note, persist, reopen."""

    persistent = True

    def __init__(self, workdir: Path, corpus: str | Path) -> None:
        self.workdir = workdir
        self.corpus = corpus

    def build(self) -> None: ...
    def query(self, text: str, k: int) -> list[str]: ...
    def update_and_query(self, path: str, text: str, query: str) -> list[str]: ...


class Nlmsync(System):
    def build(self) -> None:
        from nlmsync.config import Settings
        from nlmsync.search.index import NoteIndex
        from nlmsync.store.db import open_database
        self.vault = vault_dir(self.corpus)
        state = self.workdir / "state.db"
        self.index = NoteIndex(self.vault, open_database(state), Settings(vault=self.vault, state=state))
        self.index.sync()

    def query(self, text: str, k: int) -> list[str]:
        return [hit.path for hit in self.index.search(text, limit=k)]

    def update_and_query(self, path: str, text: str, query: str) -> list[str]:
        (self.vault / path).write_text(text, encoding="utf-8")
        self.index.mark_path_modified(path)
        return self.query(query, 10)

    @staticmethod
    def first_result_code(workdir: Path, corpus: str, query: str) -> str:
        """The library's search path: the index was built with default settings, which a NoteIndex given no
        Settings has (IndexSettings), so neither pydantic nor sqlite-utils is imported (the CLI, which
        loads the config file, is timed apart: see docs)."""
        return ("from pathlib import Path\n"
                "from nlmsync.search.index import NoteIndex\nfrom nlmsync.store.db import open_connection\n"
                f"v = Path({str(vault_dir(corpus))!r}); s = Path({str(workdir / 'state.db')!r})\n"
                f"print(NoteIndex(v, open_connection(s)).search({query!r}, limit=10)[0].path)")


class Bm25s(System):
    def __init__(self, workdir: Path, corpus: str | Path, nlm: bool) -> None:
        super().__init__(workdir, corpus)
        self.nlm = nlm

    def _tokens(self, docs: list[tuple[str, str]]) -> Any:
        import bm25s
        if self.nlm:
            return [nlm_tokens(p, t) for p, t in docs]
        return bm25s.tokenize([t for _, t in docs], show_progress=False)

    def _query_tokens(self, text: str) -> list[list[str]]:
        import bm25s
        if self.nlm:
            from nlmsync.search.tokenize import tokenize
            return [tokenize(text)]
        return bm25s.tokenize([text], return_ids=False, show_progress=False)

    def build(self) -> None:
        import bm25s
        self.docs = documents(self.corpus)
        self.paths = [p for p, _ in self.docs]
        self.retriever = bm25s.BM25()
        self.retriever.index(self._tokens(self.docs), show_progress=False)
        self.retriever.save(str(self.workdir / "bm25s"), show_progress=False)
        (self.workdir / "paths.json").write_text(json.dumps(self.paths))

    def query(self, text: str, k: int) -> list[str]:
        tokens = self._query_tokens(text)
        if not tokens[0]:
            return []
        result = self.retriever.retrieve(tokens, k=min(k, len(self.paths)), show_progress=False)
        return [self.paths[i] for i, s in zip(result.documents[0], result.scores[0]) if s > 0]

    def update_and_query(self, path: str, text: str, query: str) -> list[str]:
        import bm25s
        self.docs[self.paths.index(path)] = (path, text)
        self.retriever = bm25s.BM25()
        self.retriever.index(self._tokens(self.docs), show_progress=False)
        return self.query(query, 10)

    def first_result_code(self, query: str) -> str:
        tok = ("from nlmsync.search.tokenize import tokenize\nq = [tokenize({q!r})]" if self.nlm
               else "q = bm25s.tokenize([{q!r}], return_ids=False, show_progress=False)").format(q=query)
        return ("import json, bm25s\n"
                f"r = bm25s.BM25.load({str(self.workdir / 'bm25s')!r}, show_progress=False)\n"
                f"paths = json.load(open({str(self.workdir / 'paths.json')!r}))\n{tok}\n"
                "res = r.retrieve(q, k=10, show_progress=False)\nprint(paths[res.documents[0][0]])")


class RankBm25(System):
    persistent = False

    def __init__(self, workdir: Path, corpus: str | Path, nlm: bool) -> None:
        super().__init__(workdir, corpus)
        self.nlm = nlm

    def _tokens(self, path: str, text: str) -> list[str]:
        return nlm_tokens(path, text) if self.nlm else text.split()

    def build(self) -> None:
        from rank_bm25 import BM25Okapi
        self.docs = documents(self.corpus)
        self.paths = [p for p, _ in self.docs]
        self.bm25 = BM25Okapi([self._tokens(p, t) for p, t in self.docs])

    def query(self, text: str, k: int) -> list[str]:
        import numpy as np

        from nlmsync.search.tokenize import tokenize
        tokens = tokenize(text) if self.nlm else text.split()
        scores = self.bm25.get_scores(tokens)
        top = np.argsort(-scores, kind="stable")[:k]
        return [self.paths[i] for i in top if scores[i] > 0]

    def update_and_query(self, path: str, text: str, query: str) -> list[str]:
        from rank_bm25 import BM25Okapi
        self.docs[self.paths.index(path)] = (path, text)
        self.bm25 = BM25Okapi([self._tokens(p, t) for p, t in self.docs])
        return self.query(query, 10)


class Tantivy(System):
    def __init__(self, workdir: Path, corpus: str | Path, nlm: bool) -> None:
        super().__init__(workdir, corpus)
        self.nlm = nlm

    def _body(self, path: str, text: str) -> str:
        return " ".join(nlm_tokens(path, text)) if self.nlm else text

    def build(self) -> None:
        import tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("path", stored=True, tokenizer_name="raw")
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace" if self.nlm else "default")
        directory = self.workdir / "tantivy"
        directory.mkdir()
        self.index = tantivy.Index(builder.build(), path=str(directory))
        self.writer = self.index.writer(heap_size=200_000_000, num_threads=1)
        for path, text in documents(self.corpus):
            self.writer.add_document(tantivy.Document(path=path, body=self._body(path, text)))
        self.writer.commit()
        self.writer.wait_merging_threads()
        self.writer = self.index.writer(heap_size=50_000_000, num_threads=1)
        self.index.reload()

    def _parse(self, text: str) -> Any:
        if self.nlm:
            from nlmsync.search.tokenize import tokenize
            text = " ".join(tokenize(text))
        return self.index.parse_query_lenient(text, ["body"])[0]

    def query(self, text: str, k: int) -> list[str]:
        searcher = self.index.searcher()
        hits = searcher.search(self._parse(text), k).hits
        return [searcher.doc(address)["path"][0] for _score, address in hits]

    def update_and_query(self, path: str, text: str, query: str) -> list[str]:
        import tantivy
        self.writer.delete_documents("path", path)
        self.writer.add_document(tantivy.Document(path=path, body=self._body(path, text)))
        self.writer.commit()
        self.index.reload()
        return self.query(query, 10)

    def first_result_code(self, query: str) -> str:
        parse = ("from nlmsync.search.tokenize import tokenize\nq = ' '.join(tokenize({q!r}))" if self.nlm
                 else "q = {q!r}").format(q=query)
        return (f"import tantivy\nix = tantivy.Index.open({str(self.workdir / 'tantivy')!r})\n{parse}\n"
                "s = ix.searcher()\nh = s.search(ix.parse_query_lenient(q, ['body'])[0], 10).hits\n"
                "print(s.doc(h[0][1])['path'][0])")


def fts5_match(tokens: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in tokens)


class Fts5(System):
    def __init__(self, workdir: Path, corpus: str | Path, nlm: bool) -> None:
        super().__init__(workdir, corpus)
        self.nlm = nlm

    def _body(self, path: str, text: str) -> str:
        return " ".join(nlm_tokens(path, text)) if self.nlm else text

    def _match(self, text: str) -> str:
        if self.nlm:
            from nlmsync.search.tokenize import tokenize
            return fts5_match(tokenize(text))
        return fts5_match(re.findall(r"\w+", text))

    def build(self) -> None:
        self.db = sqlite3.connect(self.workdir / "fts.db")
        tokenizer = "unicode61 remove_diacritics 0" if self.nlm else "unicode61"
        self.db.execute(f"CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize='{tokenizer}')")
        docs = documents(self.corpus)
        self.rowid = {p: i + 1 for i, (p, _) in enumerate(docs)}
        self.db.executemany("INSERT INTO docs (rowid, path, body) VALUES (?, ?, ?)",
                            [(i + 1, p, self._body(p, t)) for i, (p, t) in enumerate(docs)])
        self.db.commit()

    def query(self, text: str, k: int) -> list[str]:
        match = self._match(text)
        if not match:
            return []
        rows = self.db.execute("SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (match, k))
        return [row[0] for row in rows]

    def update_and_query(self, path: str, text: str, query: str) -> list[str]:
        self.db.execute("UPDATE docs SET body = ? WHERE rowid = ?", (self._body(path, text), self.rowid[path]))
        self.db.commit()
        return self.query(query, 10)

    def first_result_code(self, query: str) -> str:
        match = ("from nlmsync.search.tokenize import tokenize\nm = " + repr(self._match(query))) if self.nlm \
            else "m = " + repr(self._match(query))
        return (f"import sqlite3\ndb = sqlite3.connect({str(self.workdir / 'fts.db')!r})\n{match}\n"
                "print(db.execute('SELECT path FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 10', (m,))"
                ".fetchone()[0])")


def make_system(name: str, workdir: Path, corpus: str | Path) -> System:
    nlm = name.endswith("+nlm")
    base = name.removesuffix("+nlm")
    if base == "nlmsync":
        return Nlmsync(workdir, corpus)
    return {"bm25s": Bm25s, "rank_bm25": RankBm25, "tantivy": Tantivy, "fts5": Fts5}[base](workdir, corpus, nlm)


# --- metrics -----------------------------------------------------------------------------------

def ndcg_recall(system: System) -> dict[str, float]:
    queries, qrels = cranfield_judgements()
    ndcgs, recalls = [], []
    for qid, text in queries:
        judged = qrels.get(qid, {})
        gains = {doc: 5 - grade for doc, grade in judged.items() if 1 <= grade <= 4}
        ranked = system.query(text, 100)
        dcg = sum(gains.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranked[:10]))
        ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(gains.values(), reverse=True)[:10]))
        ndcgs.append(dcg / ideal if ideal else 0.0)
        recalls.append(len(set(ranked) & set(gains)) / len(gains) if gains else 0.0)
    return {"ndcg@10": sum(ndcgs) / len(ndcgs), "recall@100": sum(recalls) / len(recalls)}


def mrr_known_items(system: System, docs: list[tuple[str, str]], per_lang: int) -> dict[str, float]:
    out: dict[str, float] = {}
    items = known_items(docs, per_lang)
    for lang in CJK_LANGS:
        for variant, column in (("full", 1), ("part", 2)):
            rr = []
            for item in (i for i in items if i[0].startswith(lang + "/")):
                ranked = system.query(item[column], 10)
                rr.append(1.0 / (ranked.index(item[0]) + 1) if item[0] in ranked else 0.0)
            out[f"mrr@10 {lang.removeprefix('pages.')} {variant}"] = sum(rr) / len(rr) if rr else 0.0
    return out


def worker(name: str, corpus: str, n_queries: int, workdir: Path) -> dict[str, Any]:
    """Runs in its own process: build, throughput, one edit, relevance; persisted index left in workdir."""
    system = make_system(name, workdir, corpus)
    started = time.process_time()
    system.build()
    result: dict[str, Any] = {"build_s": time.process_time() - started}
    docs = documents(corpus)
    slow = isinstance(system, RankBm25)
    queries = throughput_queries(corpus, docs, n_queries // 5 if slow else n_queries)
    # each query's first time is also timed apart: a system that keeps anything per query or per term
    # (nlmsync keeps each term's contributions) answers a repeated question from it, a new one not
    first_seen: set[str] = set()
    first_time = 0.0
    started = time.process_time()
    for query in queries:
        before = time.process_time()
        system.query(query, 10)
        if query not in first_seen:
            first_seen.add(query)
            first_time += time.process_time() - before
    result["qps"] = len(queries) / (time.process_time() - started)
    result["qps_new"] = len(first_seen) / first_time
    if corpus == "cranfield":
        result.update(ndcg_recall(system))
    if corpus == "tldr":
        result.update(mrr_known_items(system, docs, 60 if slow else 300))
    path, text = docs[len(docs) // 2]
    started = time.process_time()
    answer = system.update_and_query(path, text + f"\n{EDIT_WORD}\n", EDIT_WORD)
    result["update_ms"] = (time.process_time() - started) * 1000
    result["update_found"] = answer[:1] == [path]
    if isinstance(system, Nlmsync):
        system.update_and_query(path, text, "restore")
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if system.persistent:
        code = (Nlmsync.first_result_code(workdir, corpus, queries[0]) if isinstance(system, Nlmsync)
                else system.first_result_code(queries[0]))  # type: ignore[attr-defined]
        (workdir / "first_result.py").write_text(code)
        if isinstance(system, Nlmsync):
            cli = [str(Path(sys.executable).with_name("nlmsync")), "--vault", str(vault_dir(corpus)),
                   "--state", str(workdir / "state.db"), "search", "--json", queries[0]]
            (workdir / "first_result_cli.json").write_text(json.dumps(cli))
    return result


def first_result(workdir: Path, command: list[str] | None = None, runs: int = 5) -> tuple[float, float] | None:
    """Best wall time and best CPU time (user + system, all its threads) of `runs` fresh processes
    answering one query, after one untimed run: `first_result.py` in `workdir`, or `command`.

    The untimed run warms the page cache and, for every system alike, writes the bytecode of its modules
    (PYTHONDONTWRITEBYTECODE is dropped for these runs): an installed package has it, and a shell that
    sets the variable would otherwise charge an editable nlmsync, and no peer, for compiling its source
    in every run."""
    script = workdir / "first_result.py"
    if command is None:
        if not script.exists():
            return None
        command = [sys.executable, str(script)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    best, best_cpu = math.inf, math.inf
    for run in range(runs + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False, env=env)
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            raise RuntimeError(f"first-result run failed: {done.stderr.strip().splitlines()[-1:]}")
        if run:
            best = min(best, elapsed)
            best_cpu = min(best_cpu, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best, best_cpu


# --- report ------------------------------------------------------------------------------------

METRICS = [("build_s", "build s", False), ("qps", "queries/s", True), ("qps_new", "new queries/s", True),
           ("peak_mb", "peak MB", False),
           ("update_ms", "edit→answer ms", False), ("first_s", "fresh process s", False),
           ("first_cpu_s", "fresh process CPU s", False)]


def fmt(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def table(corpus: str, results: dict[str, dict[str, Any]]) -> str:
    ours = results.get("nlmsync", {})
    lines = [f"### {corpus}", "", "| system | " + " | ".join(label for _, label, _ in METRICS) + " |",
             "|---|" + "---|" * len(METRICS)]
    for name, res in results.items():
        cells = []
        for key, _label, _higher in METRICS:
            value = res.get(key)
            cell = fmt(value)
            if name != "nlmsync" and value and ours.get(key):
                cell += f" ({ours[key] / value:.2g})"
            cells.append(cell)
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
        if name == "nlmsync" and res.get("cli_first_s"):
            cli = {"first_s": fmt(res["cli_first_s"]), "first_cpu_s": fmt(res["cli_first_cpu_s"])}
            lines.append("| nlmsync search --json | " + " | ".join(cli.get(key, "") for key, _l, _h in METRICS) + " |")
    lines.append("")
    lines.append("In brackets: nlmsync / peer (queries/s: higher is better for nlmsync; the others: lower).")
    cli_cpu = ours.get("cli_first_cpu_s")
    if cli_cpu:
        ratios = [f"{name} {cli_cpu / res['first_cpu_s']:.2g}" for name, res in results.items()
                  if name != "nlmsync" and res.get("first_cpu_s")]
        lines.append("Fresh process CPU, `nlmsync search --json` / peer: " + ", ".join(ratios) + ".")
    return "\n".join(lines)


def relevance_table(all_results: dict[str, dict[str, dict[str, Any]]]) -> str:
    keys = ["ndcg@10", "recall@100", *(f"mrr@10 {lang} {variant}" for variant in ("full", "part")
                                       for lang in ("zh", "ja", "ko"))]
    lines = ["### relevance", "",
             ("| system | Cranfield nDCG@10 | recall@100 | tldr known-item MRR@10 zh | ja | ko "
              "| same, middle half of the line: zh | ja | ko |"),
             "|---|---|---|---|---|---|---|---|---|"]
    names = {n for res in all_results.values() for n in res}
    for name in [n for n in SYSTEMS if n in names]:
        merged: dict[str, Any] = {}
        for res in all_results.values():
            merged.update(res.get(name, {}))
        lines.append(f"| {name} | " + " | ".join(f"{merged[k]:.3f}" if k in merged else "—" for k in keys) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpora", default="tldr,obsidian-help,cranfield")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--worker", nargs=3, metavar=("SYSTEM", "CORPUS", "WORKDIR"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        name, corpus, workdir = args.worker
        print(json.dumps(worker(name, corpus, args.queries, Path(workdir))))
        return
    if not CORPORA.exists():
        sys.exit(f"corpora not found at {CORPORA}: build them with benchmarks/corpora.py (or set BENCHMARK_CORPORA)")
    all_results: dict[str, dict[str, dict[str, Any]]] = {}
    for corpus in args.corpora.split(","):
        materialize(corpus)
        all_results[corpus] = {}
        for name in args.systems.split(","):
            workdir = CACHE / corpus / "runs" / name
            shutil.rmtree(workdir, ignore_errors=True)
            workdir.mkdir(parents=True)
            print(f"… {corpus}: {name}", file=sys.stderr, flush=True)
            done = subprocess.run([sys.executable, __file__, "--worker", name, corpus, str(workdir),
                                   "--queries", str(args.queries)], capture_output=True, text=True, timeout=1800, check=False)
            if done.returncode != 0:
                print(f"{name} on {corpus} failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
                continue
            result = json.loads(done.stdout.strip().splitlines()[-1])
            timed = first_result(workdir)
            result["first_s"], result["first_cpu_s"] = timed if timed else (None, None)
            cli = workdir / "first_result_cli.json"
            if cli.exists():
                result["cli_first_s"], result["cli_first_cpu_s"] = first_result(workdir, json.loads(cli.read_text()))
            all_results[corpus][name] = result
            print(f"  {json.dumps(result)}", file=sys.stderr, flush=True)
        print(table(corpus, all_results[corpus]) + "\n", flush=True)
    print(relevance_table(all_results))
    (CACHE / "last_results.json").write_text(json.dumps(all_results, indent=1))


if __name__ == "__main__":
    main()
