"""Text out of PDFs: pypdfium2 against pypdf (and pdfminer.six when installed), on the same files (run by hand).

    .venv/bin/python benchmarks/pdf_extract.py --pdfs /usr/share/doc [--generated 40] [--libraries ...]

Two sets of files, each library extracting every page of every file in a fresh process of its own:

- real PDFs: every `*.pdf` under `--pdfs` (on Debian, `apt-get install texlive-latex-recommended-doc r-doc-pdf
  python-reportlab-doc` puts 206 of them, 10,515 pages, LaTeX manuals and R's references, under
  `/usr/share/doc`). Their fidelity is measured against poppler's `pdftotext` (`apt-get install poppler-utils`),
  the reference extractor, when it is on the PATH;
- generated PDFs: `--generated N` files typeset by reportlab (the bench extra) from the Cranfield abstracts of the
  benchmark corpora (`benchmarks/corpora.py`), 35 abstracts a file in justified paragraphs: their text is known,
  so fidelity is measured against the truth.

Printed per library and set: pages, pages per second of the process's CPU time (the library's import
included), the peak RSS of the process, the files it failed on, and two fidelity figures averaged over the
files: word F1 (the words of the extraction against the reference's, as multisets: a word lost, split or run
into its neighbour counts against it) and bigram F1 (the same over pairs of adjacent words: reading order and
word boundaries). The ratios are against pypdfium2, the library nlmsync uses.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
LIBRARIES = ("pypdfium2", "pypdf", "pdfminer")
WORD = re.compile(r"[^\W_]+")
PER_FILE = 35  # Cranfield abstracts in one generated PDF


def extract_pages(library: str, path: str) -> list[str]:
    """Every page's text of one PDF, as `library` gives it with its plain text call."""
    if library == "pypdfium2":
        import pypdfium2

        document = pypdfium2.PdfDocument(path)
        try:
            pages = []
            for index in range(len(document)):
                page = document[index]
                textpage = page.get_textpage()
                pages.append(textpage.get_text_range())
                textpage.close()
                page.close()
            return pages
        finally:
            document.close()
    if library == "pypdf":
        import pypdf

        return [page.extract_text() or "" for page in pypdf.PdfReader(path).pages]
    if library == "pdfminer":
        from pdfminer.high_level import extract_text

        return extract_text(path).split("\f")
    raise ValueError(library)


def run_library(library: str, listing: Path, out: Path) -> dict[str, object]:
    """In its own process: extract every file named in `listing`, write each text to `out`, and say the cost."""
    import logging

    logging.disable(logging.WARNING)  # pypdf logs every malformed object it works around
    started, wall = time.process_time(), time.perf_counter()
    pages, failed = 0, []
    for number, path in enumerate(listing.read_text(encoding="utf-8").splitlines()):
        try:
            texts = extract_pages(library, path)
        except Exception as exc:  # a benchmark counts failures; nlmsync's own reader words each one
            failed.append(f"{path}: {type(exc).__name__}")
            continue
        pages += len(texts)
        (out / f"{number}.txt").write_text("\n".join(texts), encoding="utf-8", errors="replace")
    return {"pages": pages, "cpu_s": time.process_time() - started, "wall_s": time.perf_counter() - wall,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "failed": failed}


def f1(found: Counter[str], truth: Counter[str]) -> float:
    common = sum((found & truth).values())
    if not common:
        return 0.0 if found or truth else 1.0
    precision, recall = common / sum(found.values()), common / sum(truth.values())
    return 2 * precision * recall / (precision + recall)


def fidelity(text: str, reference: str) -> tuple[float, float]:
    """(word F1, bigram F1) of `text` against `reference`, words compared lowercased."""
    words, truth = WORD.findall(text.lower()), WORD.findall(reference.lower())
    return (f1(Counter(words), Counter(truth)),
            f1(Counter(zip(words, words[1:], strict=False)), Counter(zip(truth, truth[1:], strict=False))))


def generate(folder: Path, count: int) -> list[tuple[str, str]]:
    """`count` PDFs typeset from the Cranfield abstracts; (path, the text they hold) each."""
    sys.path.insert(0, str(HERE))
    from corpora import CORPORA
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    body = styles["BodyText"]
    body.alignment = 4  # justified, as papers are
    records = [json.loads(line) for line in (CORPORA / "cranfield" / "corpus.jsonl").open(encoding="utf-8")]
    made = []
    for number in range(count):
        chunk = records[number * PER_FILE:(number + 1) * PER_FILE]
        if not chunk:
            break
        path = folder / f"cranfield-{number:03}.pdf"
        story, truth = [], []
        for record in chunk:
            title, text = record.get("title") or "", record.get("text") or ""
            story += [Paragraph(_escaped(title), styles["Heading2"]), Paragraph(_escaped(text), body)]
            truth += [title, text]
        SimpleDocTemplate(str(path)).build(story)
        made.append((str(path), "\n".join(truth)))
    return made


def _escaped(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def reference_text(path: str) -> str | None:
    """poppler's `pdftotext` of `path` (None when it is not installed or fails)."""
    if shutil.which("pdftotext") is None:
        return None
    done = subprocess.run(["pdftotext", "-enc", "UTF-8", path, "-"], capture_output=True, check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


def measure(name: str, files: list[tuple[str, str | None]], libraries: list[str], work: Path) -> None:
    listing = work / f"{name}.list"
    listing.write_text("\n".join(path for path, _ in files), encoding="utf-8")
    print(f"\n{name}: {len(files)} files")
    print(f"{'library':<10} {'pages':>6} {'pages/s':>8} {'peak MB':>8} {'failed':>6} {'word F1':>8} {'bigram F1':>9}"
          f" {'× time':>7} {'× MB':>6}")
    base: dict[str, float] = {}
    for library in libraries:
        out = work / f"{name}-{library}"
        out.mkdir()
        child = subprocess.run([sys.executable, __file__, "--child", library, str(listing), str(out)],
                               capture_output=True, text=True, check=True)
        stats = json.loads(child.stdout.splitlines()[-1])
        scores = [fidelity((out / f"{number}.txt").read_text(encoding="utf-8"), reference)
                  for number, (_, reference) in enumerate(files)
                  if reference is not None and (out / f"{number}.txt").exists()]
        words = statistics.fmean(s[0] for s in scores) if scores else float("nan")
        bigrams = statistics.fmean(s[1] for s in scores) if scores else float("nan")
        per_page = stats["cpu_s"] / max(stats["pages"], 1)
        base.setdefault("per_page", per_page)
        base.setdefault("peak", stats["peak_mb"])
        print(f"{library:<10} {stats['pages']:>6} {stats['pages'] / stats['cpu_s']:>8.1f} {stats['peak_mb']:>8.0f}"
              f" {len(stats['failed']):>6} {words:>8.4f} {bigrams:>9.4f} {per_page / base['per_page']:>7.2f}"
              f" {stats['peak_mb'] / base['peak']:>6.2f}")
        for failure in stats["failed"]:
            print(f"    failed: {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdfs", type=Path, help="a folder whose PDFs (at any depth) are the real set")
    parser.add_argument("--generated", type=int, default=40, help="PDFs to typeset from Cranfield (0: none)")
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        library, listing, out = args.child
        print(json.dumps(run_library(library, Path(listing), Path(out))))
        return
    libraries = [name for name in args.libraries.split(",") if name]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.pdfs is not None:
            real = sorted(str(p) for p in args.pdfs.rglob("*.pdf") if p.is_file() and os.path.getsize(p))
            measure("real PDFs (fidelity against pdftotext)", [(p, reference_text(p)) for p in real], libraries,
                    work)
        if args.generated:
            folder = work / "generated"
            folder.mkdir()
            made = generate(folder, args.generated)
            measure("generated PDFs (fidelity against the text typeset)", list(made), libraries, work)


if __name__ == "__main__":
    main()
