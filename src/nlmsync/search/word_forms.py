"""Word forms: a question's words found in the notes that write them otherwise ("sorting" finds "sort" and "sorted",
"pipelines" finds "pipeline"), by the Snowball stemmer of the question's language (PyStemmer). The selection's
search adds them (`NoteIndex.selection`: `ask`, `refresh --query`, `search`, `search_notes`); `NoteIndex.search`
alone ranks by the words as written.

The index holds the words as the notes write them, and nothing more: a word's forms are looked for when a question
is asked, among the indexed terms that begin like its stem (its stem less its last letter, so that "copies", stem
`copi`, finds "copy"); each of them whose stem is the word's joins the query at `FORM_WEIGHT` of the word's weight.
The word itself keeps its weight, so a note that writes the question's word ranks above one that writes another
form of it. Stop words, compounds, CJK text and stems shorter than `MIN_STEM` letters are left as they are, and a
language without a Snowball stemmer has no forms.

So the forms cost nothing to index and nothing to store: a question pays for a few lookups in the sorted vocabulary
(at most `MAX_FORMS` terms read per word) and for stemming what it finds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FORM_WEIGHT", "MAX_FORMS", "MIN_STEM", "STEMMERS", "WordForms", "stemmer"]

FORM_WEIGHT = 0.3
"""A form's weight in the query, as a share of its word's."""
MIN_STEM = 3
MAX_FORMS = 400
"""The indexed terms read per word (those that begin like its stem), at most."""
STEMMERS = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech", "da": "danish", "nl": "dutch",
    "en": "english", "eo": "esperanto", "et": "estonian", "fi": "finnish", "fr": "french", "de": "german",
    "el": "greek", "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "fa": "persian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho",
    "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
"""The Snowball stemmer of each language (by the language identifier's code) that has one."""


@functools.cache
def stemmer(language: str) -> Any | None:
    """The Snowball stemmer of `language`, None for a language without one (PyStemmer imported on first use)."""
    algorithm = STEMMERS.get(language)
    if algorithm is None:
        return None
    import Stemmer

    return Stemmer.Stemmer(algorithm)


@dataclass
class WordForms:
    """The question's words that may have other forms, and, once `expand` found them, the word each form stands
    for."""

    language: str
    words: list[str]
    """The question's words to look forms up for (content words, not CJK)."""
    found: dict[str, str] = field(default_factory=dict)
    """Each form found, and the question's word it is a form of."""

    def expand(self, query: Mapping[str, float], prefixed: Callable[[str, int], Iterable[str]]) -> dict[str, float]:
        """`query` (term -> weight) with the forms of its words that the vault holds added (`prefixed(prefix, cap)`:
        the indexed terms starting with `prefix`, at most `cap`)."""
        stem_of = stemmer(self.language)
        if stem_of is None or not self.words:
            return dict(query)
        expanded = dict(query)
        for word in self.words:
            stem = stem_of.stemWord(word)
            if len(stem) < MIN_STEM:
                continue
            prefix = stem[:-1] if len(stem) > MIN_STEM else stem
            terms = [term for term in prefixed(prefix, MAX_FORMS) if term != word and term not in query]
            weight = query.get(word, 1.0) * FORM_WEIGHT
            for term, term_stem in zip(terms, stem_of.stemWords(terms)):
                if term_stem == stem and expanded.get(term, 0.0) < weight:
                    expanded[term] = weight
                    self.found[term] = word
        return expanded
