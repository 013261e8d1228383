"""The seeded sampler behind the natural question sets, and their check (run by hand, never by the tests).

    .venv/bin/python benchmarks/questions/pick.py obsidian-help --list [--count 130]  # the pages drawn
    .venv/bin/python benchmarks/questions/pick.py tldr --show 7 8 9                  # their text
    .venv/bin/python benchmarks/questions/pick.py --check                            # validate both files
    .venv/bin/python benchmarks/questions/pick.py --split                            # write the split

The corpora are read from the folder `benchmarks/corpora.py` builds (`BENCHMARK_CORPORA` or `--corpora` names
another). Sample `n` (1, 2, ...) is a page in English, except every fifth, which is a page in one of `OTHERS`,
taken in turn. Each language's candidate pages are shuffled once with a seed made of `SEED`, the corpus and
the language, and its samples are taken in that order. A page listed in `SKIPPED` is passed over (with its
reason printed by `--list`) and the same language's next page is taken. README.md beside this file says how
the questions were written from these pages.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from corpora import CORPORA, SOURCES, records  # noqa: E402  benchmarks/corpora.py: where the corpora are

HERE = Path(__file__).resolve().parent
SEED = "nlmsync-questions-2026"
CORPUS_NAMES = ("obsidian-help", "tldr")
OTHERS = ("de", "fr", "es", "pt-br", "it", "nl", "zh", "ja", "ko")
"""The languages other than English, in the order every fifth sample takes them."""
EVERY = 5
MINIMUM = 120

OBSIDIAN_FOLDER = {"en": "en", "pt-br": "pt-br"}
TLDR_FOLDER = {"en": "pages", "pt-br": "pages.pt_BR"}

ALIAS = "an alias page: it only points to another command's page"
SUPERSEDED = "a superseded command: the page only points to its successor's page"
VARIANT = "a variant of another command: the page only points to that command's page"
SKIPPED: dict[str, dict[str, str]] = {
    "obsidian-help": {},
    "tldr": {
        "pages.de/osx/gstat.md": ALIAS,
        "pages.es/windows/internet-explorer.md": ALIAS,
        "pages/osx/gsha1sum.md": ALIAS,
        "pages.nl/osx/gsha1sum.md": ALIAS,
        "pages.nl/common/ptpython3.md": ALIAS,
        "pages/linux/pw-record.md": ALIAS,
        "pages.ko/osx/gsum.md": ALIAS,
        "pages.ko/linux/pacman-u.md": ALIAS,
        "pages.de/osx/ggroups.md": ALIAS,
        "pages/common/pnmsplit.md": SUPERSEDED,
        "pages/linux/gnuptx.md": ALIAS,
        "pages.pt_BR/common/docker-rmi.md": ALIAS,
        "pages.pt_BR/common/zstdmt.md": ALIAS,
        "pages.pt_BR/osx/gpaste.md": ALIAS,
        "pages/common/rbash.md": ALIAS,
        "pages/linux/genisoimage.md": ALIAS,
        "pages.it/osx/gmkfifo.md": ALIAS,
        "pages/common/docker-container-remove.md": ALIAS,
        "pages/windows/chrome.md": ALIAS,
        "pages.ja/linux/pw-midirecord.md": ALIAS,
        "pages.ja/linux/pw-midiplay.md": ALIAS,
        "pages/osx/gunexpand.md": ALIAS,
        "pages/common/gnmic-sub.md": ALIAS,
        "pages.es/common/impacket-secretsdump.md": ALIAS,
        "pages.es/osx/glibtool.md": ALIAS,
        "pages/common/impacket-ntfs-read.md": ALIAS,
        "pages/windows/sdelete64.md": VARIANT,
        "pages.it/osx/gstat.md": ALIAS,
    },
}
"""Sampled pages that cannot yield a sensible question, by corpus and path, with the reason."""


def folder(corpus: str, lang: str) -> str:
    """The top folder holding a language's pages: `de/` in obsidian-help, `pages.de/` in tldr."""
    if corpus == "obsidian-help":
        return OBSIDIAN_FOLDER.get(lang, lang)
    return TLDR_FOLDER.get(lang, f"pages.{lang}")


def language_of(corpus: str, path: str) -> str | None:
    """The language code of a candidate target page, or None for a page that is not one (release notes, the
    sandbox, a language the sets do not use)."""
    top = path.split("/", 1)[0]
    for lang in ("en", *OTHERS):
        if top == folder(corpus, lang):
            return lang
    return None


def load(corpora: Path, corpus: str) -> dict[str, str]:
    """Every page of a corpus by path."""
    source = corpora / SOURCES[corpus]
    if not source.is_file():
        sys.exit(f"{source}: not found (build the corpora with benchmarks/corpora.py, or give --corpora)")
    return dict(records(source))


def language_of_sample(n: int) -> str:
    return OTHERS[(n // EVERY - 1) % len(OTHERS)] if n % EVERY == 0 else "en"


Sample = tuple[int, str, str, list[tuple[str, str]]]
"""(n, language, path, the pages passed over before it with their reasons)."""


def samples(corpus: str, pages: dict[str, str], count: int) -> list[Sample]:
    """The first `count` samples."""
    queues: dict[str, list[str]] = {}
    for lang in ("en", *OTHERS):
        candidates = sorted(path for path in pages if language_of(corpus, path) == lang)
        random.Random(f"{SEED}:{corpus}:{lang}").shuffle(candidates)
        queues[lang] = candidates[::-1]  # popped from the end: the shuffled order
    taken = []
    for n in range(1, count + 1):
        lang = language_of_sample(n)
        skipped = []
        while (path := queues[lang].pop()) in SKIPPED[corpus]:
            skipped.append((path, SKIPPED[corpus][path]))
        taken.append((n, lang, path, skipped))
    return taken


def question_id(corpus: str, n: int) -> str:
    return f"{corpus}-{n:03d}"


# --- Does a question name its page? -------------------------------------------------------------------------

STOP = {
    "en": "a an the of to in on for and or with your you how what is are by from as at it its into do does "
          "can be my introduction",
    "de": "der die das den dem des ein eine einen einem und in im mit von vom zu zum zur für auf an am oder "
          "wie was einführung",
    "fr": "le la les l de des du d un une et en à au aux pour avec dans sur ou comment introduction",
    "es": "el la los las de del un una y en a al para con por o cómo introducción",
    "pt-br": "o a os as de do da dos das um uma e em no na para com por ou como introdução",
    "it": "il lo la i gli le l di del della dei delle un una e in a al alla per con da o come introduzione",
    "nl": "de het een en van in op met voor te naar of hoe introductie inleiding",
    "zh": "简介 介绍 概述",
    "ja": "紹介 概要",
    "ko": "소개",
}
"""Words a name holds that do not name the page: small words, and the words of an introduction's title."""
WORD = re.compile(r"[^\W_]+")
CJK = "\u1100-\u11ff\u3040-\u30ff\u3400-\u9fff\uac00-\ud7a3"
"""Hangul jamo, kana, CJK ideographs and Hangul syllables."""
SCRIPT_RUN = re.compile(f"[{CJK}]+|[^{CJK}]+")


def page_names(corpus: str, path: str, text: str) -> list[str]:
    """The names a page goes by: its file name, and its first heading (outside code blocks) or front-matter
    title if it has one."""
    stem = path.rsplit("/", 1)[-1].removesuffix(".md")
    names = [stem.replace("-", " ") if corpus == "tldr" else stem]
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    heading = re.search(r"^# (.+)$", prose, re.MULTILINE)
    front = text.split("\n---", 1)[0] if text.startswith("---") else ""
    title = re.search(r"^title: *(.+)$", front, re.MULTILINE)
    names += [match.group(1).strip().strip("\"'") for match in (heading, title) if match]
    return names


def _words(text: str) -> list[str]:
    """The words of a text, folded; a word whose letters change between CJK or Hangul and another script is
    cut there (`dockerコンテナ` is `docker` and `コンテナ`)."""
    folded = unicodedata.normalize("NFC", text).casefold()
    return [piece for word in WORD.findall(folded) for piece in SCRIPT_RUN.findall(word)]


ENDINGS = {"s", "es", "'s", "d", "ed", "ing", "r", "er", "ers", "n", "en", "e", "x"}
"""What an inflection may add to a word of a language written with spaces (`vault`/`vaults`,
`sync`/`syncing`)."""


def _same_word(name_word: str, question_word: str) -> bool:
    """Equal, or the same word inflected: the longer is the shorter plus one of `ENDINGS` (in Korean, plus up
    to three syllables of particles: `볼트`/`볼트를`), or both have five letters or more and differ only from
    the shorter's last letter on, by at most three letters (`property`/`properties`, `create`/`creating`)."""
    short, long = sorted((name_word, question_word), key=len)
    if short == long:
        return True
    if long.startswith(short):
        if re.search(r"[\uac00-\ud7a3]", short):
            return len(long) - len(short) <= 3
        return len(short) >= 3 and long[len(short):] in ENDINGS
    common = len(os.path.commonprefix([short, long]))
    return len(short) >= 5 and common >= len(short) - 1 and len(long) - len(short) <= 3


def _spaceless(text: str) -> bool:
    return any(unicodedata.name(c, "").startswith(("CJK", "HIRAGANA", "KATAKANA")) for c in text)


def names_one(name: str, question: str, lang: str) -> bool:
    """Whether the question holds every word of the name (its common small words left out). Chinese and
    Japanese names are cut at punctuation, spaces and hiragana (particles such as の), and each piece must
    occur in the question."""
    if _spaceless(name):
        cut = r"[\s!-/:-@\[-`{-~、。・「」（）\u3040-\u309f]+"
        pieces = [piece for piece in re.split(cut, unicodedata.normalize("NFC", name).casefold())
                  if piece and piece not in STOP.get(lang, "").split()]
        folded = unicodedata.normalize("NFC", question).casefold()
        return bool(pieces) and all(p in folded for p in pieces)
    stop = set(STOP.get(lang, "").split()) | set(STOP["en"].split())
    wanted = [w for w in _words(name) if w not in stop] or _words(name)
    have = _words(question)
    return bool(wanted) and all(any(_same_word(w, h) for h in have) for w in wanted)


def names_page(corpus: str, path: str, text: str, question: str, lang: str) -> bool:
    return any(names_one(name, question, lang) for name in page_names(corpus, path, text))


# --- Commands -----------------------------------------------------------------------------------------------

def questions_file(corpus: str) -> Path:
    return HERE / f"{corpus}.jsonl"


def read_questions(corpus: str) -> list[dict[str, object]]:
    path = questions_file(corpus)
    if not path.is_file():
        return []
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            question = json.loads(line)
        except json.JSONDecodeError as error:
            sys.exit(f"{path}:{number}: not JSON ({error.msg})")
        if not isinstance(question, dict):
            sys.exit(f"{path}:{number}: not a JSON object")
        questions.append(question)
    return questions


def write_questions(corpus: str, questions: list[dict[str, object]]) -> None:
    questions_file(corpus).write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions),
                                      encoding="utf-8")


def splits(questions: list[dict[str, object]], corpus: str) -> dict[str, str]:
    """Each question's half, dev or test, by id: the questions are grouped by language and by whether they
    name their page, each group is shuffled with a seed, and the groups laid end to end are dealt out dev,
    test, dev, test, ... so both halves hold the same mix (dev gets the odd one)."""
    groups: dict[tuple[str, bool], list[str]] = {}
    for question in questions:
        key = (str(question.get("lang")), question.get("names_page") is True)
        groups.setdefault(key, []).append(str(question.get("id")))
    dealt = []
    for key in sorted(groups):
        ids = sorted(groups[key])
        random.Random(f"{SEED}:{corpus}:split:{key[0]}:{key[1]}").shuffle(ids)
        dealt += ids
    return {qid: ("dev", "test")[i % 2] for i, qid in enumerate(dealt)}


def do_list(corpus: str, pages: dict[str, str], count: int) -> None:
    for n, lang, path, skipped in samples(corpus, pages, count):
        for passed, reason in skipped:
            print(f"  skipped  {lang:5}  {passed}  ({reason})")
        print(f"{n:5}  {lang:5}  {path}")


def do_show(corpus: str, pages: dict[str, str], numbers: list[int]) -> None:
    taken = {n: (lang, path) for n, lang, path, _ in samples(corpus, pages, max(numbers))}
    for n in numbers:
        lang, path = taken[n]
        print(f"===== {question_id(corpus, n)}  {lang}  {path}")
        print(pages[path])


def do_check(corpus: str, pages: dict[str, str]) -> list[str]:
    """Every fault of a question file, as lines; prints its figures."""
    questions = read_questions(corpus)
    where = questions_file(corpus).name
    faults: list[str] = []
    if len(questions) < MINIMUM:
        faults.append(f"{where}: {len(questions)} questions, fewer than {MINIMUM}")
    numbers = [int(str(q.get("id", "")).rsplit("-", 1)[-1]) for q in questions
               if re.fullmatch(rf"{corpus}-\d+", str(q.get("id", "")))]
    sampled = samples(corpus, pages, max(numbers, default=0))
    taken = {n: (lang, path) for n, lang, path, _ in sampled}
    passed = {path for *_, skipped in sampled for path, _ in skipped}
    faults += [f"pick.py: SKIPPED names {path}, which is not among the pages sampled"
               for path in sorted(set(SKIPPED[corpus]) - passed)]
    expected_split = splits(questions, corpus)
    keys = {"id", "question", "target", "lang", "names_page", "split"}
    seen: Counter[str] = Counter()
    for line, q in enumerate(questions, 1):
        at = f"{where}:{line}"
        if set(q) != keys:
            faults.append(f"{at}: keys {sorted(q)}, expected {sorted(keys)}")
            continue
        qid, question, target, lang = str(q["id"]), str(q["question"]), str(q["target"]), str(q["lang"])
        seen[qid] += 1
        if not re.fullmatch(rf"{corpus}-\d+", qid):
            faults.append(f"{at}: id {qid!r} is not {corpus}-<sample number>")
            continue
        if not question.strip():
            faults.append(f"{at}: empty question")
        if target not in pages:
            faults.append(f"{at}: target {target!r} is not a page of the corpus")
            continue
        if language_of(corpus, target) != lang:
            faults.append(f"{at}: lang {lang!r}, but the target is under {target.split('/', 1)[0]!r}")
        if (sample := taken[int(qid.rsplit("-", 1)[-1])]) != (lang, target):
            faults.append(f"{at}: sample {qid} is {sample[1]} ({sample[0]}), not {target} ({lang})")
        if lang in {"zh", "ja"} and not _spaceless(question):
            faults.append(f"{at}: a {lang} question without Chinese or Japanese characters")
        if lang == "ko" and not re.search(r"[\uac00-\ud7a3]", question):
            faults.append(f"{at}: a ko question without Hangul")
        named = names_page(corpus, target, pages[target], question, lang)
        if q["names_page"] is not named:
            names = " / ".join(page_names(corpus, target, pages[target]))
            faults.append(f"{at}: names_page is {q['names_page']!r}, but the question "
                          f"{'holds' if named else 'does not hold'} the page's name ({names})")
        if q["split"] != expected_split[qid]:
            faults.append(f"{at}: split {q['split']!r}, the seeded split says {expected_split[qid]!r}")
    faults += [f"{where}: id {qid} appears {times} times" for qid, times in seen.items() if times > 1]
    if sorted(set(numbers)) != list(range(1, len(set(numbers)) + 1)):
        faults.append(f"{where}: the sample numbers have gaps (a sampled page was left out without a "
                      "reason in SKIPPED)")
    naming = sum(q.get("names_page") is True for q in questions)
    if naming * 2 > len(questions):
        faults.append(f"{where}: {naming} of {len(questions)} questions name their page, more than half")
    langs = Counter(str(q.get("lang")) for q in questions)
    share = {s: sum(q.get("split") == s for q in questions) for s in ("dev", "test")}
    print(f"{corpus}: {len(questions)} questions; languages "
          + ", ".join(f"{lang} {langs[lang]}" for lang in ("en", *OTHERS) if langs[lang])
          + f"; {naming} name their page ({naming / max(len(questions), 1):.0%}); dev {share['dev']}, "
          f"test {share['test']}; {len(SKIPPED[corpus])} sampled pages skipped")
    return faults


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("corpus", nargs="?", choices=CORPUS_NAMES)
    parser.add_argument("--corpora", type=Path, default=CORPORA,
                        help="the corpora's folder (default: %(default)s)")
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--list", action="store_true", help="list the sampled pages in order")
    action.add_argument("--show", type=int, nargs="+", metavar="N", help="print the text of samples N ...")
    action.add_argument("--check", action="store_true", help="validate the question files")
    action.add_argument("--split", action="store_true", help="write each question's seeded dev/test split")
    parser.add_argument("--count", type=int, default=MINIMUM, help="how many samples --list shows")
    args = parser.parse_args()
    corpora = [args.corpus] if args.corpus else list(CORPUS_NAMES)
    if (args.list or args.show) and not args.corpus:
        parser.error("--list and --show need a corpus")
    if args.show and min(args.show) < 1:
        parser.error("--show: sample numbers start at 1")
    if args.split:
        for corpus in corpora:
            questions = read_questions(corpus)
            chosen = splits(questions, corpus)
            write_questions(corpus, [{**q, "split": chosen[str(q["id"])]} for q in questions])
        return
    pages = {corpus: load(args.corpora, corpus) for corpus in corpora}
    if args.list:
        do_list(args.corpus, pages[args.corpus], args.count)
    elif args.show:
        do_show(args.corpus, pages[args.corpus], args.show)
    else:
        faults = [fault for corpus in corpora for fault in do_check(corpus, pages[corpus])]
        print("\n".join(faults) if faults else "no faults")
        sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()
