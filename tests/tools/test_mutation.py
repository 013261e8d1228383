"""tools/mutation.py's sample and interval: a `--sample` is uniform, the same for the same seed whatever order
mutmut lists the mutants in, drawn again when the code's mutants change, and scored with a Wilson interval that
holds the scores it should."""

from __future__ import annotations

import argparse
import importlib.util
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

TOOL = Path(__file__).resolve().parents[2] / "tools" / "mutation.py"


@pytest.fixture(scope="module")
def mutation() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mutation_tool", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


NAMES = [f"nlmsync.sync.m.x_f__mutmut_{i}" for i in range(1, 21)]


def test_a_sample_gives_every_mutant_the_same_chance(mutation: ModuleType) -> None:
    # 2,000 samples of 5 of 20: each mutant is drawn 500 times on average (standard deviation about 19). A sample
    # that favours the first names, or those mutmut lists first, puts some far outside 400..600.
    drawn = Counter(name for seed in range(2000) for name in mutation.sample(NAMES, 5, seed))
    assert set(drawn) == set(NAMES)
    assert all(400 < count < 600 for count in drawn.values()), drawn


def test_a_sample_depends_on_the_seed_not_on_the_order_listed(mutation: ModuleType) -> None:
    first = mutation.sample(NAMES, 5, 44)
    assert len(first) == len(set(first)) == 5
    assert mutation.sample(list(reversed(NAMES)), 5, 44) == first
    assert mutation.sample(set(NAMES), 5, 44) == first
    assert any(mutation.sample(NAMES, 5, seed) != first for seed in range(45, 50))


def test_a_sample_larger_than_the_mutants_takes_them_all(mutation: ModuleType) -> None:
    assert mutation.sample(NAMES, 500, 1) == sorted(NAMES)


@pytest.mark.parametrize(("caught", "total", "low", "high"), [
    (50, 100, 0.4038, 0.5962),   # the textbook case: symmetric about one half
    (0, 10, 0.0, 0.2775),        # none caught: the upper bound is z² / (n + z²), not zero as p ± z·σ would give
    (10, 10, 0.7225, 1.0),       # all caught: the lower bound is n / (n + z²), not 100%
    (270, 300, 0.8608, 0.9291),  # a sample scoring 90%: asymmetric, leaning towards one half
])
def test_the_wilson_interval(mutation: ModuleType, caught: int, total: int, low: float, high: float) -> None:
    assert mutation.wilson(caught, total) == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_the_wilson_interval_holds_the_true_score_95_times_in_100(mutation: ModuleType) -> None:
    # For 150 mutants and a package scoring 90%: the chance, summed over every count a sample can catch, that the
    # count's interval holds 90%. The exact binomial weights, so the test is the same on every run.
    from math import comb
    n, p = 150, 0.9
    covered = sum(comb(n, k) * p**k * (1 - p)**(n - k) for k in range(n + 1)
                  if mutation.wilson(k, n)[0] <= p <= mutation.wilson(k, n)[1])
    assert 0.93 < covered < 0.97


def test_the_wilson_interval_of_nothing_checked_is_everything(mutation: ModuleType) -> None:
    assert mutation.wilson(0, 0) == (0.0, 1.0)


def _args(**given: object) -> argparse.Namespace:
    defaults: dict[str, object] = {"sample": 3, "seed": 7, "recheck": False, "report": False, "slow": False,
                                   "children": 1}
    return argparse.Namespace(**{**defaults, **given})


def test_a_sample_is_checked_and_drawn_again_when_the_code_changed(mutation: ModuleType, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mutants").mkdir()
    prefix = "nlmsync.sync.m."
    known = {f"{prefix}x_f__mutmut_{i}": "not checked" for i in range(1, 11)}
    known["nlmsync.sync.other.x_g__mutmut_1"] = "not checked"   # another module's: never drawn
    runs: list[list[str]] = []

    def check(work: Path, package: str, names: list[str], slow: bool, children: int) -> int:
        runs.append(names)
        if len(runs) == 1:   # the first run finds f changed: its mutants are made anew, h's added
            for name in [n for n in known if "x_f__" in n]:
                known[name] = "not checked"
            known.update({f"{prefix}x_h__mutmut_{i}": "not checked" for i in range(1, 11)})
        for name in names:
            if name in known:
                known[name] = "killed"
        return 0

    monkeypatch.setattr(mutation, "results", lambda work: dict(known))
    monkeypatch.setattr(mutation, "check", check)
    statuses = mutation.sampled(tmp_path, "sync", (prefix,), _args())
    assert sorted(statuses) == mutation.sample([n for n in known if n.startswith(prefix)], 3, 7)
    assert len(runs) >= 2 and all(name.startswith(prefix) for run in runs for name in run)
    assert set(statuses.values()) == {"killed"}


def test_a_recheck_of_a_sample_checks_its_survivors_and_the_rest_once(mutation: ModuleType, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mutants").mkdir()
    prefix = "nlmsync.app.m."
    known = {f"{prefix}x_f__mutmut_{i}": ("killed", "survived", "not checked")[i % 3] for i in range(1, 11)}
    runs: list[list[str]] = []

    def check(work: Path, package: str, names: list[str], slow: bool, children: int) -> int:
        runs.append(names)
        return 0

    monkeypatch.setattr(mutation, "results", lambda work: dict(known))
    monkeypatch.setattr(mutation, "check", check)
    statuses = mutation.sampled(tmp_path, "app", (prefix,), _args(sample=6, recheck=True))
    assert len(statuses) == 6
    # the sample's survivors, and those not checked yet: a sample is scored whole
    assert runs == [sorted(name for name, status in statuses.items() if status != "killed")]
    assert {"survived", "not checked"} <= {known[name] for name in runs[0]}


def test_each_mutant_caught_at_import_names_a_test_that_exists() -> None:
    import tomllib
    root = TOOL.parents[1]
    with (root / "tests" / "mutation_equivalents.toml").open("rb") as handle:
        named: dict[str, str] = tomllib.load(handle)["at_import"]
    assert named
    for mutant, test in named.items():
        path, _, function = test.partition("::")
        assert mutant.startswith("nlmsync.") and f"def {function}(" in (root / path).read_text(encoding="utf-8"), test


def test_a_mutant_caught_at_import_counts_as_caught(mutation: ModuleType, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / ".mutation" / "cli" / "mutants").mkdir(parents=True)
    monkeypatch.setattr(mutation, "REPO", tmp_path)
    named = "nlmsync.cli._app.x_json_flag__mutmut_4"
    statuses = {named: "survived", "nlmsync.cli._app.x_other__mutmut_1": "survived",
                "nlmsync.cli._app.x_other__mutmut_2": "killed"}
    monkeypatch.setattr(mutation, "results", lambda work: dict(statuses))
    monkeypatch.setattr("sys.argv", ["mutation.py", "cli", "--report"])
    mutation.main()
    out = capsys.readouterr().out
    assert out.startswith("cli: 3 mutants, ") and ", 2 of 3 caught: 66.7%\n" in out  # the named one caught
    assert "survived: nlmsync.cli._app.x_other__mutmut_1" in out and named not in out


def test_a_module_moved_away_leaves_no_copy_behind(mutation: ModuleType, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy is kept between runs: a module the tree no longer has must go from it and from mutmut's mutants
    (with their notes beside them), or the tests would still find it there."""
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "kept.py").write_text("A = 1\n")
    listed = "src/pkg/kept.py\0"
    monkeypatch.setattr(mutation, "REPO", repo)
    monkeypatch.setattr(mutation.subprocess, "run",
                        lambda *a, **k: argparse.Namespace(stdout=listed.encode()))
    work = tmp_path / "work"
    for copy in (work, work / "mutants"):
        (copy / "src" / "pkg").mkdir(parents=True)
        (copy / "src" / "pkg" / "gone.py").write_text("B = 2\n")
    (work / "mutants" / "src" / "pkg" / "gone.py.meta").write_text("{}")
    (work / "mutants" / "src" / "pkg" / "kept.py").write_text("A = 1  # mutated\n")
    mutation.copy_repository(work)
    assert sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_file()) == [
        "mutants/src/pkg/kept.py", "src/pkg/kept.py"]
    assert (work / "mutants" / "src" / "pkg" / "kept.py").read_text() == "A = 1  # mutated\n"
