"""Which hypothesis profile a run uses, and `examples(N)` for property tests that name their own example count.

The profiles themselves (`dev` small, `ci` thorough) are registered in `tests/conftest.py`. N is the thorough
count: the `ci` profile runs exactly N; a smaller profile scales N by its default against `ci`'s (`dev`: a
tenth), never below 1.
"""

from __future__ import annotations

from collections.abc import Mapping

from hypothesis import settings

PROFILE_VARIABLE = "HYPOTHESIS_PROFILE"
PROFILES = ("dev", "ci")


def chosen_profile(environ: Mapping[str, str]) -> str:
    """`HYPOTHESIS_PROFILE` when set; else `ci` when `CI` is set true (as CI services do), else `dev`."""
    chosen = environ.get(PROFILE_VARIABLE) or ("ci" if environ.get("CI", "").lower() in {"1", "true", "yes"}
                                               else "dev")
    if chosen not in PROFILES:
        raise ValueError(f"{PROFILE_VARIABLE}={chosen!r}: unknown hypothesis profile (dev or ci)")
    return chosen


def examples(thorough: int) -> int:
    scale = settings.default.max_examples / settings.get_profile("ci").max_examples
    return max(1, round(thorough * scale))
